/**
 * A node's rollout unit is four steps, two on the node (issue 10: a worker's upgrade opens 3 sessions,
 * prepare, upgrade, kubelet, not 4): the `upgrade` step reads the kubelet files after kubeadm, and the
 * one `kubelet` step changes them from that snapshot. A gate toggle or a runtime switch without a version
 * change updates both (the files read again, then changed), while the upgrade script runs no kubeadm
 * (test/unit/scripts/rollout.test.ts runs it in bash).
 */
import { validateCluster } from "../../../components/kubeadm/validate";
import type { ClusterSpec } from "../../../components/kubeadm/types";
import { buildPlan } from "../../../components/plan/steps";
import type { Step, StepContext } from "../../../components/steps/kind";
import { STEP_SETTINGS, CONTAINERD, CRIO } from "../helpers/fixtures";
import { kubeadmFiles, snapshotOf } from "../helpers/kubeadmFiles";

function plan(nodeLocal: boolean, criSocket: string, version = "v1.34.2") {
  const nodes = ["cp-1", "w-1"].map((name, i) => ({ name, role: name.startsWith("cp") ? "control-plane" : "worker", host: `10.0.0.${i + 1}`, criSocket }));
  const cluster = validateCluster({ kubernetesVersion: version, nodes, controlPlaneEndpoint: "10.0.0.1:6443", featureGates: { NodeLocalCRISocket: nodeLocal } } as unknown as ClusterSpec);
  const steps = buildPlan(cluster, {});
  const ctx = (id: string): StepContext => {
    const step = steps.find((s) => s.id === id) as Step;
    const node = cluster.nodes.find((n) => n.name === step.node);
    if (node === undefined) throw new Error(id);
    return { cluster, node, step, settings: STEP_SETTINGS, owner: `c-${id}`, formerOwners: [], resourceName: (x) => `c-${x}`, formerResourceNames: () => [] };
  };
  /** The upgrade step's scripts, and the kubelet step's scripts and stdin made from the upgrade's stdout. */
  const inputs = (upgradeStdout: string) => {
    const up = ctx("w-1-upgrade");
    const kl = ctx("w-1-kubelet");
    const stdin = kl.step.kind.stdin?.render(kl, { endpoint: criSocket, endpointOf: () => criSocket, stdout: (id) => (id === "w-1-upgrade" ? upgradeStdout : "") });
    return { upgrade: up.step.kind.scripts(up, criSocket).create, kubelet: kl.step.kind.scripts(kl, criSocket).create, kubeletStdin: stdin };
  };
  return { steps, ctx, inputs };
}

test("a unit is upgrade, drain, kubelet, node-metadata (a worker's drain and uncordon its rollout batch's); kubelet reads the upgrade step's output; no kubelet-files step", () => {
  const { steps, ctx } = plan(true, CONTAINERD);
  const unit = (node: string) => steps.filter((s) => s.node === node && s.members === undefined && !["prepare", "join-token", "join", "init", "cluster-config-read", "cluster-config"].includes(s.action));
  expect(unit("cp-1").map((s) => [s.id, s.runsOn, s.after])).toEqual([
    ["cp-1-upgrade", "cp-1", ["cp-1-cluster-config"]],
    ["cp-1-drain", "cp-1", ["cp-1-upgrade"]],
    ["cp-1-kubelet", "cp-1", ["cp-1-drain"]],
    ["cp-1-node-metadata", "cp-1", ["cp-1-kubelet"]],
  ]);
  // The worker's drain and uncordon are its rollout batch's (batch_1: w-1 alone), on cp-1.
  const batch = steps.filter((s) => s.id.startsWith("batch_"));
  expect(batch.map((s) => [s.id, s.runsOn, s.after, s.members])).toEqual([
    ["batch_1-drain", "cp-1", ["w-1-upgrade"], ["w-1"]],
    ["batch_1-uncordon", "cp-1", ["w-1-kubelet"], ["w-1"]],
  ]);
  // Its kubelet after its batch's drain, its node-metadata after the uncordon, when it had joined (its line).
  expect(unit("w-1").map((s) => [s.id, s.runsOn, s.after, s.line?.existing])).toEqual([
    ["w-1-upgrade", "w-1", ["w-1-join"], undefined],
    ["w-1-kubelet", "w-1", ["w-1-upgrade"], { ifAnyJoined: ["w-1"], after: ["batch_1-drain"] }],
    ["w-1-node-metadata", "cp-1", ["w-1-kubelet"], { ifAnyJoined: ["w-1"], after: ["batch_1-uncordon"] }],
  ]);
  const drain = ctx("batch_1-drain");
  expect(drain.step.kind.stdin?.reads?.(drain)).toEqual(["w-1-upgrade"]);
  expect(steps.filter((s) => s.action === "kubelet-files")).toEqual([]);
  const kubelet = ctx("w-1-kubelet");
  expect(kubelet.step.kind.stdin?.reads?.(kubelet)).toEqual(["w-1-upgrade"]);
  // The upgrade step's stdout is data (the snapshot): only its stderr is logged.
  expect(ctx("w-1-upgrade").step.kind.dataOutput).toBe(true);
});

test("kubelet's file changes come from the files the upgrade step reported; none when it reported nothing (the node joined at the target)", () => {
  const { inputs } = plan(true, CRIO);
  // The upgrade step reported legacy files (kubeadm left the flag): the kubelet step writes instance-config.yaml, config.yaml, kubeadm-flags.env.
  const legacy = inputs(`nodeVersion=v1.34.2\n${snapshotOf(kubeadmFiles(false, CRIO))}`).kubeletStdin ?? "";
  expect(legacy.split("\n").filter(Boolean).map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
    "pk-write /var/lib/kubelet/instance-config.yaml",
    "pk-write /var/lib/kubelet/config.yaml",
    "pk-write /var/lib/kubelet/kubeadm-flags.env",
  ]);
  expect(inputs(`nodeVersion=v1.34.2\n${snapshotOf(kubeadmFiles(true, CRIO))}`).kubeletStdin).toBe("");
  expect(inputs("").kubeletStdin).toBe("");
});

test("a gate toggle or a runtime switch without a version change: the upgrade step's inputs change (the files read again) and the kubelet step's too", () => {
  const reported = `nodeVersion=v1.34.2\n${snapshotOf(kubeadmFiles(true, CONTAINERD))}`;
  const base = plan(true, CONTAINERD).inputs(reported);
  const toggled = plan(false, CONTAINERD).inputs(reported);
  const switched = plan(true, CRIO).inputs(reported);
  expect(base.kubeletStdin).toBe("");
  for (const [what, other] of [["toggle", toggled], ["switch", switched]] as const) {
    expect({ what, upgradeChanged: other.upgrade !== base.upgrade, kubeletChanged: other.kubelet !== base.kubelet || other.kubeletStdin !== base.kubeletStdin }).toEqual({ what, upgradeChanged: true, kubeletChanged: true });
    expect({ what, changes: other.kubeletStdin !== "" }).toEqual({ what, changes: true });
  }
  // Same version: the upgrade script's kubeadm part is the same text, run only when the node is not at the target.
  expect(toggled.upgrade).toMatch(/^pk_upgrade_step 'w-1' 'v1\.34\.2' no /m);
  expect(base.upgrade).toMatch(/^pk_upgrade_step 'w-1' 'v1\.34\.2' no /m);
});
