/**
 * Lifecycle safety on the real engine (issue 11, items 1, 3 and 11): ordinary Pulumi actions never
 * reset a live node. Renaming the cluster, `pulumi up --replace` of a worker's join and of the init
 * leave every node joined (the stand-in's own log shows no `kubeadm reset`) and a later apply clean;
 * removing or moving the node that ran init is refused at preview; removing a worker is announced at
 * preview and done in kubeadm's order (drain, reset, delete the Node), and a reset that fails there is
 * done by the next up.
 */
import { existsSync, writeFileSync } from "fs";
import { hostPathOf } from "../nodes";
import { CONTAINERD, CRIO, LAB_DIR, kubeadmEvents, labDown, labUp, nodeAddress, ok, run, storeNodes, writeStack, type E2eRun, type TestNode, E2E_TEST_LIMIT_MS } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

const NODES: TestNode[] = [
  { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "cp-2", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "worker-2", role: "worker", criSocket: CRIO, runtimes: ["crio"] },
];

const stack = (clusterName: string, nodes: TestNode[] = NODES) => writeStack("lifecycle", "v1.34.2", nodes, { "kubeadm:clusterName": clusterName });


const resets = () => kubeadmEvents().filter((e) => e.endsWith(" kubeadm reset"));
const ranNames = (r: E2eRun) => r.resources.filter((x) => x.ran.length > 0).map((x) => x.name);
const urnOf = (r: E2eRun, name: string): string => {
  const step = r.engine.steps.find((s) => s.name === name);
  if (!step) throw new Error(`no step ${name} in the run`);
  return step.urn;
};

/** A clean later apply: nothing runs, and every node is still a member. */
async function stillWorks(clusterName: string, nodes: TestNode[] = NODES, extra: Record<string, unknown> = {}): Promise<void> {
  const again = await run(writeStack("lifecycle", "v1.34.2", nodes, { "kubeadm:clusterName": clusterName, ...extra }));
  ok(again);
  expect(ranNames(again)).toEqual([]);
  expect(Object.keys(storeNodes()).sort()).toEqual(nodes.map((n) => n.name).sort());
}

let created: E2eRun;

test("renaming the cluster (clusterName) creates the new resources and deletes the old ones without resetting any node", async () => {
  await labUp(stack("e2e"));
  // A new stack's preview already shows every step (they are registered once the component read its records).
  const first = await run(stack("e2e"), "preview");
  expect(first.ok).toBe(true);
  expect(first.resources.filter((r) => r.op === "create").length).toBeGreaterThan(25);
  const made = await run(stack("e2e"));
  ok(made);
  expect(resets()).toEqual([]);
  // A worker's own join-token and node-metadata ran no command while it joined (its join wave claimed
  // for them). `--replace` of them: the replacement's create runs nothing either (the node's prepare
  // report in the state still says it was joining), and the old deletes find the node still in the
  // last up's nodes: no drain, no Node deleted, and the claims kept.
  for (const name of ["e2e-worker-1-join-token", "e2e-worker-1-node-metadata"]) {
    const replaced = await run(stack("e2e"), "apply", [], { replace: [urnOf(made, name)] });
    ok(replaced);
    expect(replaced.resources.filter((r) => r.name === name).map((r) => r.op)).toEqual(["create-replacement", "replace", "delete-replaced"]);
    expect(Object.keys(storeNodes()).sort()).toEqual(NODES.map((n) => n.name).sort());
    expect(Object.values(storeNodes()).map((n) => n.spec.unschedulable ?? false)).toEqual([false, false, false, false]);
  }
  expect(resets()).toEqual([]);

  created = await run(stack("prod"));
  ok(created);
  // The old resources' deletes ran (the engine says so) and did nothing destructive.
  const deleted = created.resources.filter((r) => r.op === "delete").map((r) => r.name);
  expect(deleted).toEqual(expect.arrayContaining(["e2e-cp-1-init", "e2e-cp-2-join", "e2e-worker-1-join", "e2e-worker-2-join", "e2e-worker-1-node-metadata", "e2e-worker-1-join-token"]));
  expect(created.resources.filter((r) => r.op === "delete").every((r) => r.ok)).toBe(true);
  expect(resets()).toEqual([]);
  expect(Object.values(storeNodes()).map((n) => n.spec.unschedulable ?? false)).toEqual([false, false, false, false]);
  await stillWorks("prod");
});

/** `pulumi up --replace` of one resource: made anew before the old one is deleted, and no node reset. */
async function replace(name: string): Promise<void> {
  const replaced = await run(stack("prod"), "apply", [], { replace: [urnOf(created, name)] });
  ok(replaced);
  expect(replaced.resources.filter((r) => r.name === name).map((r) => r.op)).toEqual(["create-replacement", "replace", "delete-replaced"]);
  expect(resets()).toEqual([]);
}

test("pulumi up --replace of a worker's join: the replacement is made first and the old delete resets nothing", async () => {
  await replace("prod-worker-1-join");
  expect(kubeadmEvents().filter((e) => e.startsWith("worker-1 "))).toEqual(["worker-1 kubeadm join"]);
  await stillWorks("prod");
});

test("pulumi up --replace of the init: nothing is reset, the cluster keeps working", async () => {
  await replace("prod-cp-1-init");
  // Every node was made once, and nothing made again.
  expect(kubeadmEvents().filter((e) => / kubeadm (init|join)$/.test(e)).sort()).toEqual([
    "cp-1 kubeadm init",
    "cp-2 kubeadm join",
    "worker-1 kubeadm join",
    "worker-2 kubeadm join",
  ]);
  await stillWorks("prod");
});

test("removing or moving the node that ran kubeadm init is refused at preview, saying why and what to do; nothing runs", async () => {
  const withoutCp1 = NODES.filter((n) => n.name !== "cp-1");
  const before = kubeadmEvents().length;
  for (const nodes of [withoutCp1, [NODES[1], NODES[0], NODES[2], NODES[3]] as TestNode[]]) {
    const preview = await run(stack("prod", nodes), "preview");
    expect(preview.ok).toBe(false);
    const text = [...preview.errors, ...preview.engine.diagnostics].join("\n");
    expect(text).toContain('nodes: node "cp-1" ran kubeadm init for cluster "prod"');
    expect(text).toContain('Put "cp-1" back as the first control-plane node in nodes');
    // Nothing is planned: above all no delete of the steps the refused program did not register.
    expect(preview.engine.steps.filter((s) => s.op !== "same" && s.op !== "read" && !s.name.endsWith("-plan-refused")).map((s) => `${s.name}:${s.op}`)).toEqual([]);
    const apply = await run(stack("prod", nodes));
    expect(apply.ok).toBe(false);
    expect(apply.engine.steps.filter((s) => s.op === "delete" || s.op === "update").map((s) => s.name)).toEqual([]);
    expect(ranNames(apply).filter((n) => !n.endsWith("-plan-refused"))).toEqual([]);
    expect(apply.sshSessions).toEqual({});
  }
  expect(kubeadmEvents().length).toBe(before);
  await stillWorks("prod");
});

test("removing a worker: the preview names it and what will happen; the up drains it, resets it (a reset that failed once: the next up), then deletes its Node", async () => {
  const without = NODES.filter((n) => n.name !== "worker-2");
  const preview = await run(stack("prod", without), "preview");
  expect(preview.ok).toBe(true);
  const says = 'node "worker-2" is no longer in nodes: this up will drain it, run kubeadm reset on it (with its CRI socket), then delete its Node object';
  expect(preview.engine.diagnostics.filter((d) => d.startsWith("warning ")).join("\n")).toContain(says);
  expect(preview.outputs["plan"]).toEqual(expect.arrayContaining([says]));

  // Its kubeadm reset fails once (the join's delete): the up stops there, the join stays in the state.
  writeFileSync(hostPathOf(LAB_DIR, "worker-2", "/etc/lab-node/fail-once"), "reset\n");
  const failed = await run(stack("prod", without));
  expect(failed.ok).toBe(false);
  expect(failed.resources.find((r) => r.name === "prod-worker-2-join")?.error).toContain("lab fault reset");
  expect(resets()).toEqual([]);
  expect(Object.keys(storeNodes())).toContain("worker-2");
  // The next up does the reset (the delete kept its claim) and finishes the removal.
  const removed = await run(stack("prod", without));
  ok(removed);
  expect(resets()).toEqual(["worker-2 kubeadm reset"]);
  expect(existsSync(hostPathOf(LAB_DIR, "worker-2", "/etc/kubernetes/kubelet.conf"))).toBe(false);
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "cp-2", "worker-1"]);
  // kubeadm's order: drain (node-metadata's delete), reset (join's), delete the Node (join-token's).
  // Over both ups: the drain ran in the first, the reset (failed there) and the Node deletion in the second.
  const steps = [...failed.engine.steps, ...removed.engine.steps];
  const order = steps.filter((s) => s.op === "delete" && s.name.startsWith("prod-worker-2-")).map((s) => s.name);
  const at = (n: string) => order.indexOf(n);
  expect(at("prod-worker-2-node-metadata")).toBeGreaterThanOrEqual(0);
  expect(at("prod-worker-2-node-metadata")).toBeLessThan(at("prod-worker-2-join"));
  expect(at("prod-worker-2-join")).toBeLessThan(at("prod-worker-2-join-token"));
  // The Node is deleted by the last of them, after the reset (not by the drain step, before it).
  const deletes = (n: string) => steps.find((s) => s.op === "delete" && s.name === n)?.oldDelete;
  expect([deletes("prod-worker-2-node-metadata"), deletes("prod-worker-2-join"), deletes("prod-worker-2-join-token")]).toEqual([true, true, true]);
  await stillWorks("prod", without);
});

test("a worker whose machine is gone: gone: true deletes its Node without SSH to it; taking it out of the stack then runs nothing", async () => {
  const { stopNodeSshd } = await import("../nodes");
  const nodes = NODES.filter((n) => n.name !== "worker-2");
  await stopNodeSshd("worker-1", { labDir: LAB_DIR });
  const marked = nodes.map((n) => (n.name === "worker-1" ? { ...n, gone: true } : n));
  const preview = await run(stack("prod", marked), "preview");
  expect(preview.ok).toBe(true);
  expect(preview.engine.diagnostics.join("\n")).toContain('node "worker-1" is marked gone: this up deletes its Node object');
  const forgot = await run(stack("prod", marked));
  ok(forgot);
  // Besides the forget and the members record (on cp-1: it now records the mark, so that taking the entry
  // out is announced as running nothing), only the deletes of the join wave's and the rollout batch's
  // steps (worker-1, now gone, was their last member), which have no delete command: nothing else runs.
  expect(ranNames(forgot).sort()).toEqual(["prod-batch_1-drain", "prod-batch_1-uncordon", "prod-members", "prod-worker-1-forget", "prod-workers_1-join-material", "prod-workers_1-node-metadata"]);
  expect(forgot.engine.steps.filter((s) => /^prod-(workers|batch)_1-/.test(s.name)).map((s) => `${s.name}:${s.op}:${s.oldDelete === true}`).sort()).toEqual([
    "prod-batch_1-drain:delete:false",
    "prod-batch_1-uncordon:delete:false",
    "prod-workers_1-join-material:delete:false",
    "prod-workers_1-node-metadata:delete:false",
  ]);
  expect(Object.keys(forgot.sshSessions)).toEqual([`${nodeAddress(0)}:22`]);
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "cp-2"]);
  // Taking the mark off while the entry stays is refused (its steps would run on the machine again); nothing runs.
  const unmarking = await run(stack("prod", nodes));
  expect(unmarking.ok).toBe(false);
  expect([...unmarking.errors, ...unmarking.engine.diagnostics].join("\n")).toContain('node "worker-1": gone: the last up recorded this node as gone');
  expect(ranNames(unmarking).filter((n) => !n.endsWith("-plan-refused"))).toEqual([]);
  expect(unmarking.sshSessions).toEqual({});
  // The preview's warning says what happens: nothing on the machine (fails on 4d2c386: "this up will drain it, run kubeadm reset on it").
  const dropping = await run(stack("prod", nodes.filter((n) => n.name !== "worker-1")), "preview");
  expect(dropping.ok).toBe(true);
  expect(dropping.engine.diagnostics.join("\n")).toContain('node "worker-1" is no longer in nodes: it was marked gone, so this up drops its steps from the state and runs nothing on the machine');
  expect(dropping.engine.diagnostics.join("\n")).not.toContain('node "worker-1" is no longer in nodes: this up will drain it');
  const dropped = await run(stack("prod", nodes.filter((n) => n.name !== "worker-1")));
  ok(dropped);
  expect(dropped.resources.filter((r) => r.op === "delete").map((r) => r.name)).toEqual(expect.arrayContaining(["prod-worker-1-join", "prod-worker-1-node-metadata", "prod-worker-1-forget"]));
  expect(resets()).toEqual(["worker-2 kubeadm reset"]);
  await stillWorks("prod", nodes.filter((n) => n.name !== "worker-1"));
});

test("renaming with the old name as an alias (formerClusterNames) keeps every resource: nothing is created or deleted, the nodes' claims move to the new names, and a destroy then resets", async () => {
  const nodes = NODES.filter((n) => n.name === "cp-1" || n.name === "cp-2");
  const renamed = writeStack("lifecycle", "v1.34.2", nodes, { "kubeadm:clusterName": "prod2", "kubeadm:formerClusterNames": ["prod"] });
  const preview = await run(renamed, "preview");
  expect(preview.ok).toBe(true);
  expect(preview.engine.steps.filter((s) => s.op !== "same" && s.op !== "read" && s.op !== "update").map((s) => `${s.name}:${s.op}`)).toEqual([]);
  const result = await run(renamed);
  ok(result);
  // Only updates: the steps whose scripts name their resource (the ownership claims), which take over the claims.
  expect([...new Set(result.resources.map((r) => r.op))]).toEqual(["update"]);
  expect(resets()).toEqual(["worker-2 kubeadm reset"]);
  await stillWorks("prod2", nodes, { "kubeadm:formerClusterNames": ["prod"] });
  // The claims moved: a destroy of the renamed cluster resets both nodes (cp-2 first).
  const destroyed = await run(renamed, "destroy");
  expect({ ok: destroyed.ok, errors: destroyed.errors }).toEqual({ ok: true, errors: [] });
  expect(resets()).toEqual(["worker-2 kubeadm reset", "cp-2 kubeadm reset", "cp-1 kubeadm reset"]);
});
