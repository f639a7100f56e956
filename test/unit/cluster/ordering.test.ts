/**
 * The component under Pulumi's mocks: resource names, and the order the dependency graph enforces
 * (init before every join, control-plane joins one after another, workers side by side).
 */
import { installMocks, registrations, settled, valueOf, type Registration } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: false });
  ({ Cluster } = await import("../../../components"));
});

beforeEach(() => registrations.splice(0));

const reg = (name: string): Registration => {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource ${name}; have ${registrations.map((x) => x.name).join(", ")}`);
  return r;
};

test("one command per node and step, named <cluster>-<node>-<step>", async () => {
  const c = new Cluster("c", clusterArgs());
  await valueOf(c.nodes);
  await settled();
  const commands = registrations.filter((r) => r.type === "command:remote:Command").map((r) => r.name).sort();
  const expected = [
    ...["cp1", "cp2", "cp3", "w1", "w2"].flatMap((n) => [`c-${n}-prepare`, `c-${n}-upgrade`, `c-${n}-kubelet-files`, `c-${n}-node-metadata`]),
    "c-cp1-init", "c-cp1-kubeconfig", "c-cp1-cluster-config-read", "c-cp1-cluster-config",
    ...["cp2", "cp3", "w1", "w2"].flatMap((n) => [`c-${n}-join-token`, `c-${n}-join`]),
    "c-w1-drain", "c-w2-drain",
  ].sort();
  expect(commands).toEqual(expected);
});

test("init before every join; control-plane joins chained; workers after them, side by side", async () => {
  const c = new Cluster("c", clusterArgs());
  await valueOf(c.nodes);
  await settled();
  const init = reg("c-cp1-init");
  for (const n of ["cp2", "cp3", "w1", "w2"]) {
    expect(reg(`c-${n}-join-token`).start).toBeGreaterThan(init.end);
    expect(reg(`c-${n}-join`).start).toBeGreaterThan(reg(`c-${n}-join-token`).end);
  }
  expect(reg("c-cp3-join-token").start).toBeGreaterThan(reg("c-cp2-join").end);
  for (const w of ["w1", "w2"]) expect(reg(`c-${w}-join`).start).toBeGreaterThan(reg("c-cp3-join").end);
  // Workers overlap: the second starts before the first resolved.
  const [a, b] = [reg("c-w1-join"), reg("c-w2-join")];
  expect(Math.max(a.start, b.start)).toBeLessThan(Math.min(a.end, b.end));
  // Prepare steps need nothing: they all start before init resolves.
  for (const n of ["cp1", "cp2", "cp3", "w1", "w2"]) expect(reg(`c-${n}-prepare`).start).toBeLessThan(init.end);
  // Per node after its init/join: (drain), upgrade (which reads the files), kubelet-files, node-metadata.
  expect(reg("c-cp1-upgrade").start).toBeGreaterThan(reg("c-cp1-cluster-config").end);
  expect(reg("c-cp1-cluster-config").start).toBeGreaterThan(reg("c-cp1-cluster-config-read").end);
  expect(reg("c-cp1-cluster-config-read").start).toBeGreaterThan(init.end);
  expect(reg("c-w2-drain").start).toBeGreaterThan(reg("c-w2-join").end);
  expect(reg("c-w2-upgrade").start).toBeGreaterThan(reg("c-w2-drain").end);
  expect(reg("c-w2-kubelet-files").start).toBeGreaterThan(reg("c-w2-upgrade").end);
  expect(reg("c-w2-node-metadata").start).toBeGreaterThan(reg("c-w2-kubelet-files").end);
});

test("rollout on an existing cluster: control-plane nodes one at a time from the first, then workers at most maxUnavailableWorkers at once", async () => {
  const workers = ["w1", "w2", "w3", "w4", "w5"].map((n, i) => node(n, "worker", 10 + i));
  const joined = Object.fromEntries(["cp2", "cp3", "w1", "w2", "w3", "w4", "w5"].map((n) => [n, "attempt-1"]));
  const c = new Cluster("c", clusterArgs({ maxUnavailableWorkers: 2, joined, nodes: [...clusterArgs().nodes.slice(0, 3), ...workers] }));
  await valueOf(c.nodes);
  await settled();
  expect(reg("c-cp2-upgrade").start).toBeGreaterThan(reg("c-cp1-node-metadata").end);
  expect(reg("c-cp3-upgrade").start).toBeGreaterThan(reg("c-cp2-node-metadata").end);
  for (const w of workers) expect(reg(`c-${w.name}-drain`).start).toBeGreaterThan(reg("c-cp3-node-metadata").end);
  expect(reg("c-w3-drain").start).toBeGreaterThan(reg("c-w1-node-metadata").end);
  expect(reg("c-w5-drain").start).toBeGreaterThan(reg("c-w3-node-metadata").end);
  // No moment with more than 2 workers between drain start and node-metadata end.
  const spans = workers.map((w) => [reg(`c-${w.name}-drain`).start, reg(`c-${w.name}-node-metadata`).end] as const);
  for (const [start] of spans) expect(spans.filter(([a, b]) => a <= start && b > start).length).toBeLessThanOrEqual(2);
});

test("a new cluster's nodes, and a node new to an existing cluster, do not wait in the rollout line", async () => {
  const workers = ["w1", "w2", "w3"].map((n, i) => node(n, "worker", 10 + i));
  const nodes = [...clusterArgs().nodes.slice(0, 3), ...workers];
  const fresh = new Cluster("c", clusterArgs({ nodes }));
  await valueOf(fresh.nodes);
  await settled();
  // Side by side: w2's steps start before w1's last one ends; cp3's before cp2's.
  expect(reg("c-w2-drain").start).toBeLessThan(reg("c-w1-node-metadata").end);
  expect(reg("c-cp3-upgrade").start).toBeLessThan(reg("c-cp2-node-metadata").end);
  registrations.splice(0);
  // w3 is new; the others were there: only they wait in line.
  const joined = { cp2: "a", cp3: "a", w1: "a", w2: "a" };
  const grown = new Cluster("c", clusterArgs({ nodes, joined }));
  await valueOf(grown.nodes);
  await settled();
  expect(reg("c-w2-drain").start).toBeGreaterThan(reg("c-w1-node-metadata").end);
  expect(reg("c-w3-drain").start).toBeLessThan(reg("c-w2-node-metadata").end);
});

test("maxConcurrentJoins bounds the workers joining at once", async () => {
  const workers = ["w1", "w2", "w3", "w4", "w5"].map((n, i) => node(n, "worker", 10 + i));
  const c = new Cluster("c", clusterArgs({ maxConcurrentJoins: 2, nodes: [node("cp1", "control-plane", 1), ...workers] }));
  await valueOf(c.nodes);
  await settled();
  expect(reg("c-w3-join").start).toBeGreaterThan(reg("c-w1-join").end);
  expect(reg("c-w5-join").start).toBeGreaterThan(reg("c-w3-join").end);
  // At no moment more than 2 worker joins are in flight.
  const joins = workers.map((w) => reg(`c-${w.name}-join`));
  for (const j of joins) {
    const inFlight = joins.filter((k) => k.start <= j.start && k.end > j.start).length;
    expect(inFlight).toBeLessThanOrEqual(2);
  }
});

test("the plan output lists every step in order, known without running anything", async () => {
  const c = new Cluster("c", clusterArgs());
  const plan = await valueOf(c.plan);
  expect(plan).toHaveLength(5 * 4 + 2 + 4 * 2 + 2 + 2);
  expect(plan[0]).toMatch(/^1\. c-cp1-prepare \(no dependency\): check kubeadm/);
  const index = (id: string) => plan.findIndex((l) => l.includes(` c-${id} `));
  expect(index("cp1-init")).toBeLessThan(index("cp2-join-token"));
  expect(index("cp2-join")).toBeLessThan(index("cp3-join-token"));
  expect(plan[index("cp3-join-token")]).toContain("(on cp1, after cp2-join)");
  expect(plan[index("w1-join-token")]).toContain("(on cp1, after cp1-init)");
  expect(plan[index("w1-join")]).toContain("(after w1-prepare, w1-join-token, cp3-join)");
  expect(plan[index("cp1-init")]).toContain("kubeadm init v1.33.2 (NodeLocalCRISocket not in effect");
});
