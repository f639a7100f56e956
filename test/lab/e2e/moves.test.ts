/**
 * Stacks moved to new code or a new name: a stack made by the code before the drain step's report ids
 * (e5e8915, extracted from this repository's history and run as that version's lab CLI) finishes or stays
 * as it is under this code, its drains draining what they must and nothing more; runtime switches back
 * and forth drain every time; a --replace of drain steps drains nothing; a cluster renamed after an
 * upgrade writes kubeadm-config from a fresh read; a stack made by the code with an uncordon step per
 * rollout batch (a1dc379) finishes a failed rollout under this code.
 */
import { writeFileSync } from "fs";
import { hostPathOf } from "../nodes";
import { CONTAINERD, CRIO, LAB_DIR, LAB_INSTALLS, cordonedNodes, criStates, kubeadmEvents, labDown, labUp, ok, ran, run, runCodeFrom, said, storeNodes, treeAt, writeStack, type E2eRun, type TestNode, E2E_TEST_LIMIT_MS } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

/** The last commit before the drain step's report ids. */
const BEFORE_REPORTS = "e5e8915";

const BASE: TestNode[] = [
  { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "cp-2", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd", "crio"] },
  { name: "worker-2", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
];
const stack = (version: string, nodes: TestNode[] = BASE, extra: Record<string, unknown> = {}) => writeStack("moves", version, nodes, { ...LAB_INSTALLS, ...extra });

/**
 * Per node: what the drain step printed of it in the run ("drained: ..." / "no drain: ..."), or "-" when
 * none did: its own drain step's line under e5e8915 (`drained: ...`), a control-plane node's or its
 * rollout batch's line under this code (`<node>: drained: ...`).
 */
const drains = (r: E2eRun, names: string[]) =>
  Object.fromEntries(names.map((n) => [n, new RegExp(`(?:e2e-${n}-drain[^\\n]*?|-drain[^\\n]*? ${n}: )((?:no drain|drained): [^\\n]*)`).exec(said(r))?.[1] ?? "-"]));
const kubeletVersions = () => Object.fromEntries(Object.entries(storeNodes()).map(([n, v]) => [n, (v as unknown as { status: { nodeInfo: { kubeletVersion: string } } }).status.nodeInfo.kubeletVersion]));
const nothingRuns = async (file: string) => {
  const again = await run(file);
  ok(again);
  expect(again.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual([]);
};
const NAMES = BASE.map((n) => n.name);
const ALL_AT = (v: string) => Object.fromEntries(NAMES.map((n) => [n, v]));

afterEach(() => runCodeFrom(undefined));

/** A new lab at v1.33.2, provisioned by the code of `commit` (which later runs use too; default: before the report ids). */
async function madeBefore(commit = BEFORE_REPORTS): Promise<void> {
  runCodeFrom(treeAt(commit));
  await labUp(stack("v1.33.2"));
  ok(await run(stack("v1.33.2")));
}

/**
 * The rollout to v1.34.2, still run by that code, stopped at `worker`'s kubelet restart (fails once): it
 * stays cordoned and marked. Returns the count of kubeadm runs before it.
 */
async function failedAtKubelet(worker: string): Promise<number> {
  writeFileSync(hostPathOf(LAB_DIR, worker, "/etc/lab-node/fail-once"), "kubelet-start\n");
  const before = kubeadmEvents().length;
  const failed = await run(stack("v1.34.2"));
  expect(failed.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual([`e2e-${worker}-kubelet`]);
  expect(cordonedNodes()).toEqual({ unschedulable: [worker], marked: [worker] });
  return before;
}

/** The rollout to v1.34.2 run to its end by this code: every node upgraded by kubeadm once since `before`. */
async function finishedHere(before: number): Promise<E2eRun> {
  runCodeFrom(undefined);
  const done = await run(stack("v1.34.2"));
  ok(done);
  expect(kubeadmEvents().slice(before).sort()).toEqual(["cp-1 kubeadm upgrade apply", "cp-2 kubeadm upgrade node", "worker-1 kubeadm upgrade node", "worker-2 kubeadm upgrade node"]);
  return done;
}

test("a finished rollout made by e5e8915, moved to this code: kubeadm-config read anew and left as it is, upgrade steps report again without kubeadm, drain steps drain nothing, nothing cordoned; then nothing runs", async () => {
  await madeBefore();
  const rolled = await run(stack("v1.34.2"));
  ok(rolled);
  expect(drains(rolled, NAMES)).toEqual(Object.fromEntries(NAMES.map((n) => [n, "drained: kubelet v1.33.2 -> v1.34.2"])));
  const before = kubeadmEvents().length;
  runCodeFrom(undefined);
  const moved = await run(stack("v1.34.2"));
  ok(moved);
  expect(kubeadmEvents().slice(before)).toEqual([]);
  // The write step's script changed: its read ran again first (the one recorded was made before kubeadm
  // upgrade apply rewrote the ConfigMap, and the write refused on it).
  expect(moved.resources.filter((r) => /-cluster-config(-read)?$/.test(r.name) && r.ran.length > 0).map((r) => r.name).sort()).toEqual(["e2e-cp-1-cluster-config", "e2e-cp-1-cluster-config-read"]);
  expect(said(moved)).toContain("kubeadm-config: already as wanted");
  // Every upgrade step reports again; the control-plane nodes' drains run on those reports; the workers'
  // own drain steps go (no delete command: nothing runs) and their rollout batches' drains are made, and
  // run on those reports too.
  expect(ran(moved).filter((n) => /-(upgrade|drain):/.test(n)).sort()).toEqual(
    [...NAMES.map((n) => `e2e-${n}-upgrade:update`), "e2e-cp-1-drain:update", "e2e-cp-2-drain:update", "e2e-worker-1-drain:delete", "e2e-worker-2-drain:delete", "e2e-batch_1-drain:create", "e2e-batch_2-drain:create"].sort(),
  );
  expect(said(moved)).not.toContain("drained:");
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  await nothingRuns(stack("v1.34.2"));
});

test("a rollout e5e8915 left at a failed kubelet restart, moved to this code: the node is drained again before its kubelet restarts, each node upgraded once, nothing left cordoned", async () => {
  await madeBefore();
  const done = await finishedHere(await failedAtKubelet("worker-2"));
  expect(drains(done, NAMES)).toEqual({
    "cp-1": "no drain: kubelet at v1.34.2, runtime unchanged",
    "cp-2": "no drain: kubelet at v1.34.2, runtime unchanged",
    "worker-1": "no drain: kubelet at v1.34.2, runtime unchanged",
    "worker-2": "drained: kubelet v1.33.2 -> v1.34.2",
  });
  expect(kubeletVersions()).toEqual(ALL_AT("v1.34.2"));
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  await nothingRuns(stack("v1.34.2"));
});

/** The last commit with an uncordon step per rollout batch (the next batch's drain now uncordons). */
const UNCORDON_PER_BATCH = "a1dc379";

test("a rollout a1dc379 (an uncordon step per batch) left at a failed kubelet restart, moved to this code: the old uncordon step is deleted running nothing, the next batch's drain uncordons the node once its kubelet runs, each node upgraded once, nothing left cordoned", async () => {
  await madeBefore(UNCORDON_PER_BATCH);
  const done = await finishedHere(await failedAtKubelet("worker-1"));
  // batch_1's own uncordon goes (no delete command); batch_2's drain, whose script now uncordons batch_1
  // first, runs after worker-1's kubelet; batch_2's uncordon (the last batch's) is updated.
  const ops = (name: string) => done.engine.steps.filter((x) => x.name === name).map((x) => `${x.op}:${x.oldDelete === true}`);
  expect(ops("e2e-batch_1-uncordon")).toEqual(["delete:false"]);
  // The steps that ran under a1dc379 run again only when their script changed since (every script names
  // lib.sh's hash: a new library or drain script), the drains then on the upgrade steps' new reports.
  const rolled = ["e2e-batch_1-uncordon:delete", "e2e-batch_2-drain:update", "e2e-batch_2-uncordon:update"];
  const again = ["e2e-cp-1-drain:update", "e2e-cp-2-drain:update", "e2e-batch_1-drain:update"];
  const ranHere = ran(done);
  expect(ranHere.filter((r) => /-(drain|uncordon):/.test(r) && !again.includes(r)).sort()).toEqual(rolled);
  expect(said(done)).toContain("worker-1: uncordoned");
  // worker-2 is drained in this run. The others only if their steps run again: a control-plane node then
  // drains nothing (its kubelet is at the target); worker-1, which this component still cordons (its
  // kubelet restart failed), is drained again on its new report before its kubelet step: it holds no pod
  // to evict, and is uncordoned after.
  const reran = (step: string) => ranHere.includes(`e2e-${step}:update`);
  expect(drains(done, NAMES)).toEqual({
    "cp-1": reran("cp-1-drain") ? "no drain: kubelet at v1.34.2, runtime unchanged" : "-",
    "cp-2": reran("cp-2-drain") ? "no drain: kubelet at v1.34.2, runtime unchanged" : "-",
    "worker-1": reran("batch_1-drain") ? "drained: kubelet v1.33.2 -> v1.34.2" : "-",
    "worker-2": "drained: kubelet v1.33.2 -> v1.34.2",
  });
  expect(kubeletVersions()).toEqual(ALL_AT("v1.34.2"));
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  await nothingRuns(stack("v1.34.2"));
});

test("a rollout e5e8915 left at a blocked drain, moved to this code: finishes, each node upgraded once and drained; then runtime switches back and forth drain every time; a --replace of the drain steps or a drain setting change drains nothing", async () => {
  await madeBefore();
  process.env.LAB_DIR = LAB_DIR;
  const { setDrainBlock } = await import("../standin/store");
  await setDrainBlock("worker-1", "blocked by a PodDisruptionBudget");
  const before = kubeadmEvents().length;
  const failed = await run(stack("v1.34.2"));
  expect(failed.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-1-drain"]);
  await setDrainBlock("worker-1", undefined);
  const done = await finishedHere(before);
  expect({ w1: drains(done, ["worker-1"]), w2: drains(done, ["worker-2"]) }).toEqual({
    w1: { "worker-1": "drained: kubelet v1.33.2 -> v1.34.2" },
    w2: { "worker-2": "drained: kubelet v1.33.2 -> v1.34.2" },
  });
  expect(kubeletVersions()).toEqual(ALL_AT("v1.34.2"));
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  await nothingRuns(stack("v1.34.2"));

  // containerd -> CRI-O -> containerd -> CRI-O on worker-1: each switch drains.
  let from = CONTAINERD;
  for (const to of [CRIO, CONTAINERD, CRIO]) {
    const nodes = BASE.map((n) => (n.name === "worker-1" ? { ...n, criSocket: to } : n));
    const switched = await run(stack("v1.34.2", nodes));
    ok(switched);
    expect({ to, d: drains(switched, ["worker-1"]) }).toEqual({ to, d: { "worker-1": `drained: container runtime ${from} -> ${to}` } });
    const cri = criStates(["worker-1"])["worker-1"];
    expect({ to, uses: cri?.flag ?? cri?.instanceConfig?.match(/"(\S+)"/)?.[1], c: cordonedNodes() }).toEqual({ to, uses: to, c: { unschedulable: [], marked: [] } });
    from = to;
  }
  const last = BASE.map((n) => (n.name === "worker-1" ? { ...n, criSocket: CRIO } : n));
  await nothingRuns(stack("v1.34.2", last));

  // --replace of every drain step, then a drain setting change, after the finished rollout and switches: no drain.
  // The drain steps in the state: the control-plane nodes' and the rollout batches' (the workers' own, deleted in `done`, are gone).
  const urns = done.engine.steps.filter((s) => s.name.endsWith("-drain") && s.op !== "delete").map((s) => s.urn);
  expect(urns.length).toBe(4);
  const replaced = await run(stack("v1.34.2", last), "apply", [], { replace: urns });
  ok(replaced);
  expect(new Set(replaced.resources.filter((r) => r.name.endsWith("-drain") && r.ran.length > 0).map((r) => r.name)).size).toBe(urns.length);
  expect(said(replaced)).not.toContain("drained:");
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  const settings = await run(stack("v1.34.2", last, { "kubeadm:drainTimeoutSeconds": 301, "kubeadm:maxUnavailableWorkers": 2 }));
  ok(settings);
  expect(said(settings)).not.toContain("drained:");
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
});

test("renaming the cluster with its old name as an alias after an upgrade: cluster-config (whose script names its read step) reads kubeadm-config anew, not refusing on the read made before kubeadm upgrade apply", async () => {
  const nodes = BASE.filter((n) => n.name === "cp-1" || n.name === "worker-2");
  const at = (name: string, version: string, extra: Record<string, unknown> = {}) => writeStack("rename", version, nodes, { ...LAB_INSTALLS, "kubeadm:clusterName": name, ...extra });
  await labUp(at("prod", "v1.33.2"));
  ok(await run(at("prod", "v1.33.2")));
  ok(await run(at("prod", "v1.34.2")));
  const renamed = await run(at("prod2", "v1.34.2", { "kubeadm:formerClusterNames": ["prod"] }));
  ok(renamed);
  expect([...new Set(renamed.resources.map((r) => r.op))]).toEqual(["update"]);
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  await nothingRuns(at("prod2", "v1.34.2", { "kubeadm:formerClusterNames": ["prod"] }));
});
