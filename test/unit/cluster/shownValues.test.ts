/**
 * What a step shows at the head of its stdin (so in `pulumi preview --diff`) is exactly what changes its
 * inputs: every shown value changes the step's scripts or stdin (showing it never makes a step run for
 * nothing), and every such value is shown.
 */
jest.mock("../../../components/cluster/remoteCommand", () => require("../helpers/recordingCommand").recordingCommandModule());
import { validateCluster } from "../../../components/kubeadm/validate";
import type { ClusterSpec } from "../../../components/kubeadm/types";
import { buildPlan } from "../../../components/plan/steps";
import type { ShownValue, StepContext } from "../../../components/steps/kind";
import { stepValues } from "../../../components/steps/values";
import { installMocks, plain, registrations, settled } from "../helpers/mocks";
import { madeCommands } from "../helpers/recordingCommand";
import { STEP_SETTINGS, clusterArgs } from "../helpers/fixtures";

interface Variant {
  kubernetesVersion: string;
  criSocket: string;
  NodeLocalCRISocket: boolean;
}
const BASE: Variant = { kubernetesVersion: "v1.34.2", criSocket: "unix:///run/containerd/containerd.sock", NodeLocalCRISocket: true };
const OTHER: Variant = { kubernetesVersion: "v1.35.0", criSocket: "unix:///var/run/crio/crio.sock", NodeLocalCRISocket: false };

/** Each step's inputs as its kind renders them (stdin only for kinds that read no other step's output), by step id. */
function inputs(v: Variant): Map<string, { inputs: string; ctx: StepContext }> {
  const nodes = ["cp-1", "cp-2", "w-1"].map((name, i) => ({ name, role: name.startsWith("cp") ? "control-plane" : "worker", host: `10.0.0.${i + 1}`, criSocket: v.criSocket }));
  const cluster = validateCluster({ kubernetesVersion: v.kubernetesVersion, nodes, controlPlaneEndpoint: "10.0.0.1:6443", featureGates: { NodeLocalCRISocket: v.NodeLocalCRISocket } } as unknown as ClusterSpec);
  const out = new Map<string, { inputs: string; ctx: StepContext }>();
  for (const step of buildPlan(cluster, {})) {
    const node = cluster.nodes.find((n) => n.name === step.node);
    if (node === undefined) throw new Error(step.id);
    const ctx: StepContext = { cluster, node, step, settings: STEP_SETTINGS, owner: `c-${step.id}`, formerOwners: [], resourceName: (id) => `c-${id}`, formerResourceNames: () => [] };
    const stdin = step.kind.stdin && step.kind.stdin.reads === undefined ? step.kind.stdin.render(ctx, { endpoint: v.criSocket, stdout: () => "", endpointOf: () => v.criSocket }) : "";
    out.set(step.id, { inputs: JSON.stringify([step.kind.scripts(ctx, v.criSocket), stdin]), ctx });
  }
  return out;
}

test("each kind shows exactly the values that change its inputs", () => {
  const base = inputs(BASE);
  const changed = (["kubernetesVersion", "criSocket", "NodeLocalCRISocket"] as ShownValue[]).map((k) => ({ k, m: inputs({ ...BASE, [k]: OTHER[k] }) }));
  for (const [id, { inputs: text, ctx }] of base) {
    // A group step's criSocket is its members' (one line each in its stdin's data, shown by the diff as
    // is), not the node that runs it: only a node's own step shows it at the head.
    const own = (k: ShownValue) => k !== "criSocket" || ctx.step.members === undefined;
    const sensitive = changed.filter(({ k, m }) => m.get(id)?.inputs !== text && own(k)).map(({ k }) => k);
    expect({ step: id, shows: [...(ctx.step.kind.shows ?? [])].sort() }).toEqual({ step: id, shows: sensitive.sort() });
  }
  const upgrade = base.get("w-1-upgrade")?.ctx as StepContext;
  expect(stepValues(upgrade, BASE.criSocket)).toEqual({
    title: "pulumi-kubeadm step upgrade on node w-1",
    values: [["kubernetesVersion", "v1.34.2"], ["criSocket", BASE.criSocket], ["NodeLocalCRISocket", "true"]],
  });
});

test("every step's Command hides its scripts from the diff and starts its stdin with its values; records do not", async () => {
  await installMocks({ nodeLocal: true });
  const { Cluster } = await import("../../../components");
  new Cluster("c", clusterArgs({ kubernetesVersion: "v1.34.2" }));
  await settled();
  const hidden = new Map(madeCommands().map((m) => [m.name, m.opts.hideDiffs]));
  // The members record (which writes the node list on cp1) is no step: its stdin is its value.
  const steps = registrations.filter((r) => r.type === "command:remote:Command" && r.inputs.create !== undefined && r.name !== "c-members");
  expect(steps.length).toBeGreaterThan(30);
  for (const r of steps) {
    // prepare's stdin carries the packed shell library after its values: hidden too.
    const hides = r.name.endsWith("-prepare") ? ["create", "update", "delete", "stdin"] : ["create", "update", "delete"];
    expect({ name: r.name, hideDiffs: hidden.get(r.name) }).toEqual({ name: r.name, hideDiffs: hides });
    expect(String(r.inputs.create)).toMatch(/^while IFS= read -r pk_line && \[ "\$pk_line" != '---' \]; do :; done; exec /);
  }
  const stdin = (name: string) => String(plain(registrations.find((r) => r.name === name)?.inputs.stdin));
  expect(stdin("c-w1-kubelet")).toBe("pulumi-kubeadm step kubelet on node w1\nkubernetesVersion: v1.34.2\nNodeLocalCRISocket: true\n---\n");
  expect(stdin("c-cp3-prepare").split("\n").slice(0, 3)).toEqual(["pulumi-kubeadm step prepare on node cp3", "kubernetesVersion: v1.34.2", "criSocket: detected on the node"]);
  expect(stdin("c-cp2-drain")).toMatch(/^pulumi-kubeadm step drain on node cp2\n---\n(drain|keep) /);
  // A rollout batch's drain: one verdict line per member (maxUnavailableWorkers 1: w1 alone in batch_1).
  expect(stdin("c-batch_1-drain")).toMatch(/^pulumi-kubeadm step drain of rollout batch batch_1 on node cp1\n---\n(drain|keep) [^\n]*\n$/);
  // A later batch's drain: its members' verdicts, then the batch before's upgrade reports (it uncordons that batch first).
  expect(stdin("c-batch_2-drain")).toMatch(/^pulumi-kubeadm step drain of rollout batch batch_2 on node cp1\n---\n(drain|keep) [^\n]*\nahead w1 [-0-9a-f]+\n$/);
  // The last batch's uncordon: its members' endpoints.
  expect(stdin("c-batch_2-uncordon")).toBe("pulumi-kubeadm step uncordon of rollout batch batch_2 on node cp1\nkubernetesVersion: v1.34.2\n---\nw2 unix:///var/run/crio/crio.sock\n");
  const records = registrations.filter((r) => r.type === "command:remote:Command" && r.inputs.create === undefined);
  expect(records.length).toBeGreaterThan(0);
  for (const r of records) expect({ name: r.name, hideDiffs: hidden.get(r.name) }).toEqual({ name: r.name, hideDiffs: undefined });
});
