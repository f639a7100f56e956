/**
 * kubeadm's procedures on the real engine (issue 11, items 4-10, 12, 14): a failed join is retried from a
 * clean node; an upgrade runs kubeadm before the kubelet and leaves the kubelet alone when `upgrade
 * apply` fails; a node added in the same up as a version change joins a control plane already at the
 * target; a kubelet outside the skew policy is refused before anything changes; an operator's cordon
 * stays; the ConfigMap keeps its metadata; the admin kubeconfig follows the certificate upgrade apply
 * renews; a criSocket change after a gate toggle switches the node's runtime in place (drained,
 * rewritten, restarted, uncordoned).
 */
import { stackOutputRevealed } from "../engine/stack";
import { writeFileSync } from "fs";
import { hostPathOf } from "../nodes";
import { CONTAINERD, CRIO, LAB_DIR, LAB_INSTALLS, cordonedNodes, criStates, kubeadmEvents, labDown, labUp, nodeFile, ok, run, said, storeNodes, writeStack, type E2eRun, type TestNode, E2E_TEST_LIMIT_MS } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

const BASE: TestNode[] = [
  { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "cp-2", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd", "crio"] },
  { name: "worker-2", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
];
/** In the lab from the start (a machine ready), in the stack only from the third test. */
const WORKER_3: TestNode = { name: "worker-3", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] };

const stack = (version: string, nodes: TestNode[] = BASE, extra: Record<string, unknown> = {}) =>
  writeStack("rollout", version, nodes, { ...LAB_INSTALLS, ...extra });


const armFault = (node: string, point: string) => writeFileSync(hostPathOf(LAB_DIR, node, "/etc/lab-node/fail-once"), `${point}\n`);
const installed = (node: string) => ({
  kubeadm: nodeFile(node, "/etc/lab-node/kubeadm-version")?.trim(),
  kubelet: (nodeFile(node, "/etc/lab-node/kubelet-version") ?? nodeFile(node, "/etc/lab-node/kubeadm-version"))?.trim(),
});
const since = (n: number) => kubeadmEvents().slice(n);
/** What the run's commands logged and the CLI printed. */
const kubeletVersion = (node: string) => (storeNodes()[node] as unknown as { status: { nodeInfo: { kubeletVersion: string } } }).status.nodeInfo.kubeletVersion;

test("a join that fails after its kubelet-start phase is retried from a clean node: kubeadm reset --cri-socket, then the join", async () => {
  await labUp(stack("v1.33.2", [...BASE, WORKER_3]));
  armFault("worker-1", "join-after-kubelet-start");
  const first = await run(stack("v1.33.2"));
  expect(first.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-1-join"]);
  expect(first.resources.find((r) => r.name === "e2e-worker-1-join")?.error).toContain("error execution phase kubelet-start");
  // The half-made node (kubelet.conf written) would fail kubeadm's preflight on a plain retry.
  expect(nodeFile("worker-1", "/etc/kubernetes/kubelet.conf")).toBeDefined();
  ok(await run(stack("v1.33.2")));
  expect(kubeadmEvents().filter((e) => e.startsWith("worker-1 "))).toEqual(["worker-1 kubeadm reset", "worker-1 kubeadm join"]);
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "cp-2", "worker-1", "worker-2"]);
});

test("upgrade: kubeadm first; a failed upgrade apply leaves every kubelet as it was; the re-run upgrades in kubeadm's order and keeps an operator's cordon", async () => {
  process.env.LAB_DIR = LAB_DIR;
  const { updateStore, readStore } = await import("../standin/store");
  // An operator cordoned worker-2 for reasons of their own; kubeadm-config carries a label, an annotation
  // and a data key someone else put there.
  await updateStore((s) => {
    s.nodes["worker-2"]!.spec.unschedulable = true;
    const cm = s.configMaps["kube-system/kubeadm-config"]!;
    cm.metadata.labels = { "example.com/owner": "platform" };
    cm.metadata.annotations = { "example.com/note": "keep me" };
    cm.data["Extra"] = "kept\n";
  });
  const kubeconfigBefore = nodeFile("cp-1", "/etc/kubernetes/admin.conf");
  armFault("cp-1", "upgrade-apply");
  const before = kubeadmEvents().length;
  const failed = await run(stack("v1.34.2"));
  expect(failed.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-cp-1-upgrade"]);
  // kubeadm was installed for the upgrade, the kubelet was not: never newer than the API server.
  expect(installed("cp-1")).toEqual({ kubeadm: "v1.34.2", kubelet: "v1.33.2" });
  expect(kubeletVersion("cp-1")).toBe("v1.33.2");
  for (const n of ["cp-2", "worker-1", "worker-2"]) expect({ n, v: installed(n) }).toEqual({ n, v: { kubeadm: "v1.33.2", kubelet: "v1.33.2" } });
  expect(since(before)).toEqual([]);

  const done = await run(stack("v1.34.2"));
  ok(done);
  // upgrade apply on the first control-plane node before anything else, then the others one at a time.
  expect(since(before)).toEqual(["cp-1 kubeadm upgrade apply", "cp-2 kubeadm upgrade node", "worker-1 kubeadm upgrade node", "worker-2 kubeadm upgrade node"]);
  for (const n of ["cp-1", "cp-2", "worker-1", "worker-2"]) {
    expect({ n, v: installed(n), kubelet: kubeletVersion(n) }).toEqual({ n, v: { kubeadm: "v1.34.2", kubelet: "v1.34.2" }, kubelet: "v1.34.2" });
  }
  // worker-1 was drained and uncordoned; worker-2, cordoned by its operator, was drained and stays cordoned.
  const nodes = storeNodes();
  expect([nodes["worker-1"]?.spec.unschedulable ?? false, nodes["worker-2"]?.spec.unschedulable ?? false]).toEqual([false, true]);
  for (const n of ["worker-1", "worker-2"]) expect(nodes[n]?.metadata.annotations["kubeadm.pulumi.com/cordoned"]).toBeUndefined();
  expect(said(done)).toContain("drained: kubelet v1.33.2 -> v1.34.2");
  // Control-plane nodes too are drained before their kubelet's minor upgrade (kubeadm's upgrade guide),
  // then uncordoned.
  for (const n of ["cp-1", "cp-2"]) expect({ n, drained: new RegExp(`e2e-${n}-drain .*drained: kubelet v1\\.33\\.2 -> v1\\.34\\.2`).test(said(done)) }).toEqual({ n, drained: true });
  expect([nodes["cp-1"]?.spec.unschedulable ?? false, nodes["cp-2"]?.spec.unschedulable ?? false]).toEqual([false, false]);
  // The admin kubeconfig output follows the certificate upgrade apply renewed.
  const kubeconfigAfter = nodeFile("cp-1", "/etc/kubernetes/admin.conf");
  expect(kubeconfigAfter).not.toBe(kubeconfigBefore);
  // What a user reads is the renewed file itself, not the one read at provisioning.
  expect(stackOutputRevealed(LAB_DIR, "rollout", "kubeconfig")).toBe(kubeconfigAfter!.replace(/\n$/, ""));
  expect(done.resources.filter((r) => r.name === "e2e-cp-1-node-metadata").map((r) => r.ran)).toEqual([["update"]]);
  expect(said(done)).not.toContain(/client-key-data: (\S+)/.exec(kubeconfigAfter!)![1]!);
  const cm = (await readStore()).configMaps["kube-system/kubeadm-config"]!;
  expect({ labels: cm.metadata.labels, annotations: cm.metadata.annotations, extra: cm.data["Extra"] }).toEqual({
    labels: { "example.com/owner": "platform" },
    annotations: { "example.com/note": "keep me" },
    extra: "kept\n",
  });
  const again = await run(stack("v1.34.2"));
  expect(again.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual([]);
});

test("a kubelet outside the skew policy is refused before anything changes, naming the node; a node added with a version change joins a control plane already at the target", async () => {
  for (const f of ["kubeadm-version", "kubelet-version"]) writeFileSync(hostPathOf(LAB_DIR, "worker-3", `/etc/lab-node/${f}`), "v1.36.0\n");
  const nodes = [...BASE, WORKER_3];
  const before = kubeadmEvents().length;
  const refused = await run(stack("v1.35.0", nodes));
  expect(refused.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-3-prepare"]);
  expect(refused.resources.find((r) => r.name === "e2e-worker-3-prepare")?.error).toContain(
    "pulumi-kubeadm: node worker-3: its kubelet v1.36.0 is newer than the API server will be (v1.35.0); the kubelet may never be newer than kube-apiserver; nothing was changed",
  );
  expect(since(before)).toEqual([]);
  expect(installed("cp-1")).toEqual({ kubeadm: "v1.34.2", kubelet: "v1.34.2" });

  for (const f of ["kubeadm-version", "kubelet-version"]) writeFileSync(hostPathOf(LAB_DIR, "worker-3", `/etc/lab-node/${f}`), "v1.35.0\n");
  const grown = await run(stack("v1.35.0", nodes));
  ok(grown);
  const events = since(before);
  expect(events.slice(0, 2)).toEqual(["cp-1 kubeadm upgrade apply", "cp-2 kubeadm upgrade node"]);
  expect(events.slice(2).sort()).toEqual(["worker-1 kubeadm upgrade node", "worker-2 kubeadm upgrade node", "worker-3 kubeadm join"]);
  expect(events.filter((e) => e.startsWith("worker-3 "))).toEqual(["worker-3 kubeadm join"]);
  expect(kubeletVersion("worker-3")).toBe("v1.35.0");
});

test("a criSocket change after a gate toggle switches the node's runtime in place: drained, files rewritten, kubelet restarted, uncordoned; the preview names it", async () => {
  const nodes = [...BASE, WORKER_3];
  const off = { "kubeadm:featureGates": { NodeLocalCRISocket: false } };
  ok(await run(stack("v1.35.0", nodes, off)));
  expect(criStates(["worker-1"])["worker-1"]).toEqual({ instanceConfig: undefined, flag: CONTAINERD, annotation: CONTAINERD });
  const switched = nodes.map((n) => (n.name === "worker-1" ? { ...n, criSocket: CRIO } : n));
  const preview = await run(stack("v1.35.0", switched, off), "preview");
  expect(preview.ok).toBe(true);
  const says = `node "worker-1": criSocket ${CONTAINERD} -> ${CRIO}: this up will switch its container runtime in place`;
  expect(preview.engine.diagnostics.join("\n")).toContain(says);
  expect((preview.outputs["plan"] as string[]).join("\n")).toContain(says);

  const before = kubeadmEvents().length;
  const result = await run(stack("v1.35.0", switched, off));
  ok(result);
  expect(said(result)).toContain(`drained: container runtime ${CONTAINERD} -> ${CRIO}`);
  // Only its rollout batch's drain ran (its stdin holds the members' endpoints) and the next batch's drain,
  // which uncordons it (its stdin holds worker-1's new upgrade report) and drains nothing; its own
  // node-metadata (the cri-socket annotation) after them, and its join wave's (with the gate off its stdin
  // holds the members' endpoints).
  const stepsRan = (r: E2eRun, end: RegExp) => [...new Set(r.resources.filter((x) => end.test(x.name) && x.ran.length > 0).map((x) => x.name))].sort();
  expect(stepsRan(result, /-drain$/)).toEqual(["e2e-batch_1-drain", "e2e-batch_2-drain"]);
  expect(stepsRan(result, /-(uncordon|node-metadata)$/)).toEqual(["e2e-worker-1-node-metadata", "e2e-workers_1-node-metadata"]);
  expect(said(result)).toContain("worker-2: no drain: kubelet at v1.35.0, runtime unchanged");
  expect(said(result)).toContain("worker-1: uncordoned");
  expect(criStates(["worker-1"])["worker-1"]).toEqual({ instanceConfig: undefined, flag: CRIO, annotation: CRIO });
  expect(storeNodes()["worker-1"]?.spec.unschedulable ?? false).toBe(false);
  expect(since(before)).toEqual([]);
  const health = await (await import("../nodes")).runOnNode("worker-1", "systemctl is-active kubelet", undefined, { labDir: LAB_DIR });
  expect(health.stdout.trim()).toBe("active");
  const again = await run(stack("v1.35.0", switched, off));
  expect(again.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual([]);
});

test("a change of the drain settings alone drains nothing: a drain step run again on a report it already rolled out leaves its node alone", async () => {
  // The cluster as the test before left it: every node at v1.35.0, worker-1 switched to CRI-O. Each
  // node's drain step still holds the report its upgrade step made then; worker-1's says "another
  // runtime in use". A drain setting changes the drain steps' scripts, so they run again on it.
  const switched = [...BASE, WORKER_3].map((n) => (n.name === "worker-1" ? { ...n, criSocket: CRIO } : n));
  const off = { "kubeadm:featureGates": { NodeLocalCRISocket: false } };
  // Cordoned, and marked as cordoned by this component: worker-2 only, its operator's cordon (the second test).
  const drainsRan = (r: E2eRun) => [...new Set(r.resources.filter((x) => x.name.endsWith("-drain") && x.ran.length > 0).map((x) => x.name))].sort();
  // maxUnavailableWorkers regroups the workers' rollout batches (w1, w2, w3 -> w1 w2, w3): the batches'
  // steps are replaced (their create runs again) and the third deleted; no worker's own step runs, so a
  // node drained here would stay cordoned.
  const window = await run(stack("v1.35.0", switched, { ...off, "kubeadm:maxUnavailableWorkers": 2 }));
  ok(window);
  expect(drainsRan(window)).toEqual(["e2e-batch_1-drain", "e2e-batch_2-drain", "e2e-batch_3-drain"]);
  expect(window.resources.filter((x) => x.ran.length > 0 && !/^e2e-batch_\d-(drain|uncordon)$/.test(x.name)).map((x) => x.name)).toEqual([]);
  expect(said(window)).not.toContain("drained:");
  expect(cordonedNodes()).toEqual({ unschedulable: ["worker-2"], marked: [] });
  // drainGracePeriodSeconds changes every drain script (and the delete of each node-metadata step but the first control-plane node's).
  const grace = { ...off, "kubeadm:maxUnavailableWorkers": 2, "kubeadm:drainGracePeriodSeconds": 5 };
  const graced = await run(stack("v1.35.0", switched, grace));
  ok(graced);
  expect(drainsRan(graced)).toEqual(["e2e-batch_1-drain", "e2e-batch_2-drain", "e2e-cp-1-drain", "e2e-cp-2-drain"]);
  expect(said(graced)).not.toContain("drained:");
  expect(cordonedNodes()).toEqual({ unschedulable: ["worker-2"], marked: [] });
  const again = await run(stack("v1.35.0", switched, grace));
  expect(again.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual([]);
});
