/**
 * The component under Pulumi's mocks: resource names, and the order the dependency graph enforces
 * (init before every join, control-plane joins one after another, workers side by side).
 */
import { installMocks, plain, registrations, scriptOf, settled, valueOf, type Registration } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: false });
  ({ Cluster } = await import("../../../components"));
});

beforeEach(() => registrations.splice(0));

/** Inputs without the mock's secret wrappers. */
const plainInputs = (inputs: Record<string, unknown>) => plain(inputs);

const reg = (name: string): Registration => {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource ${name}; have ${registrations.map((x) => x.name).join(", ")}`);
  return r;
};

test("one command per node and step, named <cluster>-<node>-<step>, and the component's two records", async () => {
  const c = new Cluster("c", clusterArgs());
  await valueOf(c.nodes);
  await settled();
  const commands = registrations.filter((r) => r.type === "command:remote:Command").map((r) => r.name).sort();
  const expected = [
    ...["cp1", "cp2", "cp3", "w1", "w2"].flatMap((n) => [`c-${n}-prepare`, `c-${n}-upgrade`, ...(n.startsWith("cp") ? [`c-${n}-drain`] : []), `c-${n}-kubelet`, `c-${n}-node-metadata`]),
    "c-cp1-init", "c-cp1-cluster-config-read", "c-cp1-cluster-config",
    ...["cp2", "cp3", "w1", "w2"].flatMap((n) => [`c-${n}-join-token`, `c-${n}-join`]),
    // The workers' join wave (maxConcurrentJoins 10: one wave).
    "c-workers_1-join-material", "c-workers_1-node-metadata",
    // The workers' rollout batches (maxUnavailableWorkers 1: one worker each), no drain of their own;
    // batch_2's drain uncordons batch_1, the last batch has its own uncordon.
    "c-batch_1-drain", "c-batch_2-drain", "c-batch_2-uncordon",
    "c-init-node", "c-members",
  ].sort();
  expect(commands).toEqual(expected);
  // The init-node record runs nothing; the members record writes the node list on cp1 (and its delete removes it).
  expect(Object.keys(reg("c-init-node").inputs).filter((k) => ["create", "update", "delete"].includes(k))).toEqual([]);
  expect(Object.keys(reg("c-members").inputs).filter((k) => ["create", "update", "delete"].includes(k))).toEqual(["create", "delete"]);
  expect(scriptOf(String(reg("c-members").inputs.create))).toContain("printf '%s' '# written by c-members\ncp1\ncp2\ncp3\nw1\nw2\n' >\"$tmp\"");
});

test("first control-plane node first: init, kubeadm-config, its upgrade apply; each other control-plane node joins and upgrades after the one before; workers after them", async () => {
  const c = new Cluster("c", clusterArgs());
  await valueOf(c.nodes);
  await settled();
  const init = reg("c-cp1-init");
  // Nothing changes before every node's prepare (which checks kubeadm's version rules there).
  for (const n of ["cp1", "cp2", "cp3", "w1", "w2"]) expect(init.start).toBeGreaterThan(reg(`c-${n}-prepare`).end);
  expect(reg("c-cp1-cluster-config-read").start).toBeGreaterThan(init.end);
  expect(reg("c-cp1-cluster-config").start).toBeGreaterThan(reg("c-cp1-cluster-config-read").end);
  expect(reg("c-cp1-upgrade").start).toBeGreaterThan(reg("c-cp1-cluster-config").end);
  // The admin kubeconfig is read after the upgrade (which renews its certificate): cp1's node-metadata
  // prints it, the last step of cp1's unit.
  expect(reg("c-cp1-node-metadata").start).toBeGreaterThan(reg("c-cp1-kubelet").end);
  expect(reg("c-cp1-kubelet").start).toBeGreaterThan(reg("c-cp1-upgrade").end);
  // Nothing else joins or upgrades before the first control-plane node ran its kubeadm upgrade apply
  // (its drain goes on beside), nothing else is drained before its unit is done.
  for (const n of ["cp2", "cp3", "w1", "w2"]) {
    expect(reg(`c-${n}-join`).start).toBeGreaterThan(reg("c-cp1-upgrade").end);
    expect(reg(`c-${n}-join`).start).toBeGreaterThan(reg(`c-${n}-join-token`).end);
    expect(reg(`c-${n}-upgrade`).start).toBeGreaterThan(reg(`c-${n}-join`).end);
    expect(reg(`c-${n.startsWith("cp") ? n : `batch_${n.slice(1)}`}-drain`).start).toBeGreaterThan(reg("c-cp1-node-metadata").end);
  }
  // Workers once the last control-plane node ran its kubeadm upgrade (every API server at the target);
  // they drain once its whole unit is done (never cordoned beside it).
  // A worker's join waits for its wave's join-material, made once the control plane is upgraded (its own
  // join-token too when the worker had joined; idle on a joining worker, it waits for nothing more).
  // The node ahead's drain goes on beside (fails on 7a17c88: after that drain).
  expect(reg("c-workers_1-join-material").start).toBeGreaterThan(reg("c-cp3-upgrade").end);
  expect(reg("c-workers_1-join-material").start).toBeLessThan(reg("c-cp3-drain").end);
  expect(reg("c-cp2-upgrade").start).toBeGreaterThan(reg("c-cp1-upgrade").end);
  expect(reg("c-cp2-join-token").start).toBeLessThan(reg("c-cp1-drain").end);
  expect(reg("c-cp3-join-token").start).toBeGreaterThan(reg("c-cp2-upgrade").end);
  expect(reg("c-cp3-join-token").start).toBeLessThan(reg("c-cp2-drain").end);
  for (const w of ["w1", "w2"]) expect(reg(`c-${w}-join`).start).toBeGreaterThan(reg("c-cp3-upgrade").end);
  for (const b of ["batch_1", "batch_2"]) expect(reg(`c-${b}-drain`).start).toBeGreaterThan(reg("c-cp3-node-metadata").end);
  // Workers join side by side.
  const [a, b] = [reg("c-w1-join"), reg("c-w2-join")];
  expect(Math.max(a.start, b.start)).toBeLessThan(Math.min(a.end, b.end));
  // Prepare steps need nothing: they run side by side.
  const prepares = ["cp1", "cp2", "cp3", "w1", "w2"].map((n) => reg(`c-${n}-prepare`));
  expect(Math.max(...prepares.map((r) => r.start))).toBeLessThan(Math.min(...prepares.map((r) => r.end)));
  // kubeadm's order in each unit: kubeadm (upgrade), drain, kubelet (package, files, restart), uncordon
  // (a control-plane node's in its node-metadata; a worker's drain its rollout batch's, its uncordon the
  // next batch's drain (w1: batch_2's) or the last batch's uncordon (w2: batch_2's), and its own
  // node-metadata after the uncordon).
  for (const [n, drain, uncordon] of [["cp2", "cp2-drain", undefined], ["w1", "batch_1-drain", "batch_2-drain"], ["w2", "batch_2-drain", "batch_2-uncordon"]] as const) {
    expect(reg(`c-${drain}`).start).toBeGreaterThan(reg(`c-${n}-upgrade`).end);
    expect(reg(`c-${n}-kubelet`).start).toBeGreaterThan(reg(`c-${drain}`).end);
    expect(reg(`c-${n}-node-metadata`).start).toBeGreaterThan(reg(`c-${uncordon ?? `${n}-kubelet`}`).end);
    if (uncordon !== undefined) expect(reg(`c-${uncordon}`).start).toBeGreaterThan(reg(`c-${n}-kubelet`).end);
  }
});

test("the rollout line does not depend on anything the caller passes: workers at most maxUnavailableWorkers at once, control-plane nodes one at a time", async () => {
  const workers = ["w1", "w2", "w3", "w4", "w5"].map((n, i) => node(n, "worker", 10 + i));
  const c = new Cluster("c", clusterArgs({ maxUnavailableWorkers: 2, nodes: [...clusterArgs().nodes.slice(0, 3), ...workers] }));
  await valueOf(c.nodes);
  await settled();
  // Control-plane nodes one at a time between drain and uncordon, each upgraded once the one before is
  // (its drain beside).
  expect(reg("c-cp2-upgrade").start).toBeGreaterThan(reg("c-cp1-upgrade").end);
  expect(reg("c-cp3-upgrade").start).toBeGreaterThan(reg("c-cp2-upgrade").end);
  expect(reg("c-cp2-drain").start).toBeGreaterThan(reg("c-cp1-node-metadata").end);
  expect(reg("c-cp3-drain").start).toBeGreaterThan(reg("c-cp2-node-metadata").end);
  // Workers once the last control-plane node is upgraded, in batches of 2 (w1 w2, w3 w4, w5); the first
  // batch drains once its unit is done, each later one (which first uncordons the batch before) once the
  // kubelets of the batch before are done; a batch's upgrades run beside the drain of the batch ahead,
  // after what that drain waits for (fails on 7a17c88: after that drain).
  for (const w of workers) expect(reg(`c-${w.name}-upgrade`).start).toBeGreaterThan(reg("c-cp3-upgrade").end);
  expect(reg("c-batch_1-drain").start).toBeGreaterThan(reg("c-cp3-node-metadata").end);
  for (const w of ["w1", "w2"]) expect(reg("c-batch_2-drain").start).toBeGreaterThan(reg(`c-${w}-kubelet`).end);
  for (const w of ["w3", "w4"]) expect(reg("c-batch_3-drain").start).toBeGreaterThan(reg(`c-${w}-kubelet`).end);
  for (const w of ["w3", "w4"]) expect(reg(`c-${w}-upgrade`).start).toBeGreaterThan(reg("c-cp3-node-metadata").end);
  for (const w of ["w3", "w4"]) expect(reg(`c-${w}-upgrade`).start).toBeLessThan(reg("c-batch_1-drain").end);
  for (const w of ["w1", "w2"]) expect(reg("c-w5-upgrade").start).toBeGreaterThan(reg(`c-${w}-kubelet`).end);
  expect(reg("c-w5-upgrade").start).toBeLessThan(reg("c-batch_2-drain").end);
  // A batch drains once every member is upgraded; it is uncordoned (by the next batch's drain, or the last
  // batch's uncordon) once every member's kubelet is done, and each member's node-metadata comes after that.
  for (const [b, members, uncordon] of [["batch_1", ["w1", "w2"], "batch_2-drain"], ["batch_2", ["w3", "w4"], "batch_3-drain"], ["batch_3", ["w5"], "batch_3-uncordon"]] as const) {
    for (const w of members) {
      expect(reg(`c-${b}-drain`).start).toBeGreaterThan(reg(`c-${w}-upgrade`).end);
      expect(reg(`c-${w}-kubelet`).start).toBeGreaterThan(reg(`c-${b}-drain`).end);
      expect(reg(`c-${uncordon}`).start).toBeGreaterThan(reg(`c-${w}-kubelet`).end);
      expect(reg(`c-${w}-node-metadata`).start).toBeGreaterThan(reg(`c-${uncordon}`).end);
    }
  }
  // The batches' drains one after another (one batch cordoned at a time: each drain first uncordons the
  // batch before); at most two batches (4 workers) upgraded ahead of their batch's drain: the one being
  // drained and the next, whose upgrades run beside that drain; never a third.
  expect(reg("c-batch_2-drain").start).toBeGreaterThan(reg("c-batch_1-drain").end);
  expect(reg("c-batch_3-drain").start).toBeGreaterThan(reg("c-batch_2-drain").end);
  const upgraded = workers.map((w, i) => [reg(`c-${w.name}-upgrade`).start, reg(`c-batch_${1 + (i >> 1)}-drain`).end] as const);
  const ahead = upgraded.map(([start]) => upgraded.filter(([a, b]) => a <= start && b > start).length);
  expect(Math.max(...ahead)).toBeLessThanOrEqual(4);
  expect(Math.max(...ahead)).toBeGreaterThan(2);
});

test("no resource input holds the clock: the same program at two times registers the same inputs", async () => {
  const inputsAt = async (offsetMs: number) => {
    registrations.splice(0);
    const realNow = Date.now;
    Date.now = () => realNow() + offsetMs;
    try {
      const c = new Cluster("c", clusterArgs());
      await valueOf(c.nodes);
      await settled();
    } finally {
      Date.now = realNow;
    }
    return Object.fromEntries(registrations.map((r) => [r.name, JSON.stringify(plainInputs(r.inputs))]));
  };
  const now = await inputsAt(0);
  const later = await inputsAt(5 * 3600 * 1000);
  expect(Object.keys(now).length).toBeGreaterThan(30);
  expect(later).toEqual(now);
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

test("describePlan lists every step of the desired state in order, known without running anything; the plan output says what the run changes", async () => {
  const { buildPlan, describePlan, validateCluster } = await import("../../../components");
  const args = clusterArgs();
  const c = new Cluster("c", args);
  // Under the mocks the component's record reads back what this run recorded: nothing left to change.
  expect(await valueOf(c.plan)).toEqual([expect.stringMatching(/^nothing to change: cluster "c" is as the last up recorded it \(v1\.33\.2, 5 nodes\)/)]);
  const plan = describePlan("c", buildPlan(validateCluster(args as never)));
  // Per node prepare, upgrade, kubelet, node-metadata, a control-plane node's drain; cp1's three (init and
  // the kubeadm-config read and edit; its node-metadata reads the admin kubeconfig); join-token
  // and join of the others; the wave's two steps; each worker's rollout batch's drain (maxUnavailableWorkers 1)
  // and the last batch's uncordon.
  expect(plan).toHaveLength(5 * 4 + 3 + 3 + 4 * 2 + 2 + 2 + 1);
  expect(plan[0]).toMatch(/^1\. c-cp1-prepare \(no dependency\): check kubeadm/);
  const index = (id: string) => plan.findIndex((l) => l.includes(` c-${id} `));
  expect(index("cp1-init")).toBeLessThan(index("cp2-join-token"));
  expect(index("cp2-join")).toBeLessThan(index("cp3-join-token"));
  expect(plan[index("cp3-join-token")]).toContain("(on cp1, after cp1-cluster-config; after cp2-upgrade if cp2 had joined before this run, else after cp2-join)");
  expect(plan[index("cp3-drain")]).toContain("(on cp1, after cp3-upgrade; after cp2-node-metadata if cp2 had joined before this run, else after cp2-join; if cp1 or cp3 had joined before this run: after cp2-node-metadata)");
  // A new worker's join-token runs nothing, but each is an engine operation: after the first control-plane
  // join's material, so that they run beside that join rather than ahead of it.
  expect(plan[index("w1-join-token")]).toContain(
    "c-w1-join-token (on cp1, after cp1-cluster-config, cp2-join-token; if w1 had joined before this run: after cp3-upgrade if cp3 had joined before this run, else after cp3-join): ",
  );
  // With one control-plane node there is no such join: after the kubeadm-config edit alone.
  const single = describePlan("c", buildPlan(validateCluster(clusterArgs({ nodes: [node("cp1", "control-plane", 1), node("w1", "worker", 4)] }) as never)));
  expect(single.find((l) => l.includes(" c-w1-join-token "))).toContain("c-w1-join-token (on cp1, after cp1-cluster-config; if w1 had joined before this run: ");
  expect(plan[index("workers_1-join-material")]).toContain(
    "c-workers_1-join-material (on cp1, after cp1-cluster-config, w1-join-token, w2-join-token; after cp3-upgrade if cp3 had joined before this run, else after cp3-join): make fresh join material for the join wave of w1 and w2: ONE bootstrap token",
  );
  expect(plan[index("w1-join")]).toContain("(after w1-prepare, w1-join-token, workers_1-join-material)");
  expect(plan[index("workers_1-node-metadata")]).toContain("c-workers_1-node-metadata (on cp1, after w1-node-metadata, w2-node-metadata): for w1 and w2, in one session:");
  expect(index("workers_1-node-metadata")).toBe(plan.length - 1);
  expect(index("batch_2-uncordon")).toBe(plan.length - 3);
  expect(plan[index("w2-upgrade")]).toContain("(after w2-join; after cp3-node-metadata if cp3 had joined before this run, else after cp3-join; if cp1 or w1 had joined before this run: after cp3-node-metadata)");
  expect(plan[index("batch_1-drain")]).toContain("c-batch_1-drain (on cp1, after w1-upgrade; after cp3-node-metadata if cp3 had joined before this run, else after cp3-join; if cp1 or w1 had joined before this run: after cp3-node-metadata): for w1, in one session, side by side:");
  expect(plan[index("batch_2-drain")]).toContain("c-batch_2-drain (on cp1, after w2-upgrade; after w1-kubelet if w1 had joined before this run, else after w1-join; if cp1 or w2 had joined before this run: after batch_1-drain): first uncordon w1 (the batch before, after its kubelets; only what this component cordoned), then for w2, in one session, side by side:");
  expect(plan[index("w1-node-metadata")]).toContain("c-w1-node-metadata (on cp1, after w1-kubelet; if w1 had joined before this run: after batch_2-drain): ");
  expect(plan[index("batch_2-uncordon")]).toContain("c-batch_2-uncordon (on cp1, after w2-kubelet): for w2, in one session: uncordon each that this component cordoned");
  expect(plan[index("w2-node-metadata")]).toContain("c-w2-node-metadata (on cp1, after w2-kubelet; if w2 had joined before this run: after batch_2-uncordon): ");
  expect(index("w2-drain")).toBe(-1);
  expect(plan[index("cp1-upgrade")]).toContain("(after cp1-cluster-config): to v1.33.2: if the node is not at v1.33.2: the kubeadm package, kubeadm upgrade apply v1.33.2");
  expect(plan[index("cp1-init")]).toContain("(after cp1-prepare, cp2-prepare, cp3-prepare, w1-prepare, w2-prepare)");
  expect(plan[index("cp1-init")]).toContain("kubeadm init v1.33.2 (NodeLocalCRISocket not in effect");
});
