/**
 * Rollout batches in the plan: the workers not gone, in plan order, `maxUnavailableWorkers` at a time,
 * each with ONE drain step on the first control-plane node, and the last batch ONE uncordon step; the
 * first batch drains after the control plane's last unit, each later one after the kubelets of the batch
 * before, which it uncordons first; a member's upgrade runs beside the drain of the batch ahead (after what
 * that drain waits for). (Fails on 150ba08: one drain per worker, no batches; on a1dc379: one uncordon step per batch.)
 */
import { validateCluster } from "../../../components/kubeadm/validate";
import { buildPlan, lineAfter } from "../../../components/plan/steps";
import { checkPlanOrder } from "../../../components/plan/describe";
import type { Step } from "../../../components/steps/kind";

function plan(workers: number, maxUnavailableWorkers: number, gone: string[] = [], maxConcurrentJoins?: number): Step[] {
  const nodes = ["cp1", ...Array.from({ length: workers }, (_, i) => `w${i + 1}`)].map((name, i) => ({
    name,
    role: i === 0 ? "control-plane" : "worker",
    host: `10.0.0.${i + 1}`,
    ...(gone.includes(name) ? { gone: true } : {}),
  }));
  return buildPlan(validateCluster({ kubernetesVersion: "v1.34.2", nodes, controlPlaneEndpoint: "10.0.0.1:6443" } as never), { maxUnavailableWorkers, ...(maxConcurrentJoins ? { maxConcurrentJoins } : {}) });
}
const batches = (steps: Step[], action: string) => steps.filter((s) => s.id.startsWith("batch_") && s.action === action).map((s) => [s.id, s.members]);
const step = (steps: Step[], id: string) => {
  const s = steps.find((x) => x.id === id);
  if (s === undefined) throw new Error(`no step ${id}`);
  return s;
};
/** What a step waits for: its `after` and its line's waits, in a cluster that existed (all joined) and in a new one. */
const waits = (steps: Step[], id: string) => {
  const s = step(steps, id);
  return { after: s.after, existing: lineAfter(s.line, () => true), fresh: lineAfter(s.line, () => false) };
};

test("5 workers, maxUnavailableWorkers 2: batches w1 w2, w3 w4, w5, each one drain on cp1, the last one an uncordon; no worker's own drain", () => {
  const steps = plan(5, 2);
  expect(batches(steps, "drain")).toEqual([["batch_1-drain", ["w1", "w2"]], ["batch_2-drain", ["w3", "w4"]], ["batch_3-drain", ["w5"]]]);
  expect(batches(steps, "uncordon")).toEqual([["batch_3-uncordon", ["w5"]]]);
  for (const s of steps.filter((x) => x.id.startsWith("batch_"))) expect({ id: s.id, runsOn: s.runsOn }).toEqual({ id: s.id, runsOn: "cp1" });
  expect(steps.filter((s) => /^w[0-9]+-drain$/.test(s.id))).toEqual([]);
  expect(() => checkPlanOrder(steps)).not.toThrow();
});

test("the batches' waits: drain after every member's upgrade (the first after the control plane's unit, later ones after the kubelets of the batch before, which they uncordon first: of each member that had joined, else its join), kubelet after its batch's drain, node-metadata after the step that uncordons it", () => {
  const steps = plan(5, 2);
  expect(waits(steps, "batch_1-drain")).toEqual({ after: ["w1-upgrade", "w2-upgrade"], existing: ["cp1-node-metadata"], fresh: ["cp1-cluster-config"] });
  // A line decided by the batch before's reports: in a new cluster (nothing drained, no mark to remove)
  // its members' joins only, so the idle drains of a provisioning do not wait one after another.
  // In a cluster that existed, also after the drain before (the line holds across batches that join now).
  expect(waits(steps, "batch_2-drain")).toEqual({ after: ["w3-upgrade", "w4-upgrade"], existing: ["w1-kubelet", "w2-kubelet", "batch_1-drain"], fresh: ["w1-join", "w2-join"] });
  expect(waits(steps, "batch_3-drain")).toEqual({ after: ["w5-upgrade"], existing: ["w3-kubelet", "w4-kubelet", "batch_2-drain"], fresh: ["w3-join", "w4-join"] });
  for (const [w, b, uncordon] of [["w1", 1, "batch_2-drain"], ["w2", 1, "batch_2-drain"], ["w3", 2, "batch_3-drain"], ["w4", 2, "batch_3-drain"], ["w5", 3, "batch_3-uncordon"]] as const) {
    // Its batch's drain and the step that uncordons it only when it had joined (only then is it drained).
    expect(waits(steps, `${w}-kubelet`)).toEqual({ after: [`${w}-upgrade`], existing: [`batch_${b}-drain`], fresh: [] });
    expect(waits(steps, `${w}-node-metadata`)).toEqual({ after: [`${w}-kubelet`], existing: [uncordon], fresh: [] });
    // A member's upgrade (kubeadm's files) runs beside the drain of the batch ahead: after what that drain
    // waits for besides its members' upgrades (fails on 7a17c88: after that drain).
    const twoAhead = b === 1 ? undefined : b === 2 ? { existing: ["cp1-node-metadata"], fresh: ["cp1-cluster-config"] } : { existing: ["w1-kubelet", "w2-kubelet", "batch_1-drain"], fresh: ["w1-join", "w2-join"] };
    expect(waits(steps, `${w}-upgrade`)).toEqual({ after: [`${w}-join`], existing: twoAhead?.existing ?? [], fresh: twoAhead?.fresh ?? [] });
  }
  // In the cluster, the first drain waits on the marks of the control-plane nodes; each later one
  // uncordons the batch before first.
  expect(steps.filter((s) => s.id.startsWith("batch_")).map((s) => [s.id, s.ahead, s.uncordonsFirst])).toEqual([
    ["batch_1-drain", ["cp1"], undefined],
    ["batch_2-drain", undefined, ["w1", "w2"]],
    ["batch_3-drain", undefined, ["w3", "w4"]],
    ["batch_3-uncordon", undefined, undefined],
  ]);
  expect(waits(steps, "batch_3-uncordon")).toEqual({ after: ["w5-kubelet"], existing: [], fresh: [] });
});

test("a gone worker is in no batch and has no drain step; the batches close up around it", () => {
  const steps = plan(6, 2, ["w3"]);
  expect(batches(steps, "drain")).toEqual([["batch_1-drain", ["w1", "w2"]], ["batch_2-drain", ["w4", "w5"]], ["batch_3-drain", ["w6"]]]);
  expect(steps.filter((s) => s.node === "w3").map((s) => s.action).sort()).toEqual(["forget", "join", "join-token", "kubelet", "node-metadata", "prepare", "upgrade"]);
  expect(steps.filter((s) => s.members?.includes("w3") || s.after.some((a) => a.startsWith("w3-")))).toEqual([]);
  expect(() => checkPlanOrder(steps)).not.toThrow();
});

test("maxUnavailableWorkers 1: each batch is one worker; the plan order holds for every size", () => {
  const steps = plan(5, 1);
  expect(batches(steps, "drain")).toEqual([1, 2, 3, 4, 5].map((k) => [`batch_${k}-drain`, [`w${k}`]]));
  expect(batches(steps, "uncordon")).toEqual([["batch_5-uncordon", ["w5"]]]);
  expect(waits(steps, "batch_5-drain")).toEqual({ after: ["w5-upgrade"], existing: ["w4-kubelet", "batch_4-drain"], fresh: ["w4-join"] });
  // Batches across join waves of another size (a wave's node-metadata after its last member's).
  for (const size of [1, 2, 3, 5, 6]) for (const joins of [1, 2, 4, 10]) expect(() => checkPlanOrder(plan(5, size, ["w2"], joins))).not.toThrow();
  expect(batches(plan(5, 6), "drain")).toEqual([["batch_1-drain", ["w1", "w2", "w3", "w4", "w5"]]]);
});

test("a worker's node-metadata says which step uncordons it after a version rollout: the next batch's drain, or the last batch's uncordon (fails on 1810d79: its batch's uncordon, a step only the last batch has)", () => {
  const steps = plan(3, 2);
  expect(steps.some((s) => s.id === "batch_1-uncordon")).toBe(false);
  for (const w of ["w1", "w3"]) {
    expect({ w, says: step(steps, `${w}-node-metadata`).summary }).toEqual({
      w,
      says: expect.stringContaining("a version rollout does not run it (the next rollout batch's drain uncordons it, first thing; in the last batch, its uncordon)"),
    });
  }
});
