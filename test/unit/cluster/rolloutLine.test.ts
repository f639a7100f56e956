/**
 * The rollout line decided by the nodes' own prepare reports (`joined=yes|no`): a node that joins in this
 * run waits in no line and holds none up, and its unit's node-side steps run no command; nodes that had
 * joined keep kubeadm's order and the worker window.
 */
import { installMocks, registrations, settled, valueOf, type FakeNodes, type Registration } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";
import { lineAfter } from "../../../components/plan/steps";

let Cluster: typeof import("../../../components").Cluster;
let fake: FakeNodes;

beforeAll(async () => {
  ({ fake } = await installMocks({ nodeLocal: true }));
  ({ Cluster } = await import("../../../components"));
});

beforeEach(() => registrations.splice(0));

const reg = (name: string): Registration => {
  const r = registrations.find((x) => x.name === name);
  if (!r) throw new Error(`no resource ${name}; have ${registrations.map((x) => x.name).join(", ")}`);
  return r;
};

const WORKERS = ["w1", "w2", "w3", "w4", "w5"];
const args = () => clusterArgs({ nodes: [...clusterArgs().nodes.slice(0, 3), ...WORKERS.map((n, i) => node(n, "worker", 10 + i))] });

async function up(joined: (node: string) => boolean, version = "v1.33.2"): Promise<void> {
  fake.joined = joined;
  const c = new Cluster("c", { ...args(), kubernetesVersion: version });
  await valueOf(c.nodes);
  await settled();
}

test("a new cluster: no unit waits for another; each control-plane join waits only for the join before it; workers join once the last control-plane node joined", async () => {
  await up(() => false);
  // The first control-plane node's unit does not hold up the joins.
  expect(reg("c-cp2-join-token").start).toBeGreaterThan(reg("c-cp1-cluster-config").end);
  expect(reg("c-cp2-join-token").start).toBeLessThan(reg("c-cp1-node-metadata").end);
  // Control-plane nodes join one at a time, each after the join before it, not after its unit.
  expect(reg("c-cp3-join-token").start).toBeGreaterThan(reg("c-cp2-join").end);
  expect(reg("c-cp3-join-token").start).toBeLessThan(reg("c-cp2-node-metadata").end);
  for (const w of WORKERS) expect(reg(`c-${w}-join`).start).toBeGreaterThan(reg("c-cp3-join").end);
  // The workers' own join-tokens (idle: no worker had joined) wait for nothing but the configuration.
  for (const w of WORKERS) expect(reg(`c-${w}-join-token`).start).toBeLessThan(reg("c-cp2-join").end);
  expect(reg("c-workers_1-join-material").start).toBeGreaterThan(reg("c-cp3-join").end);
  expect(reg("c-w1-join").start).toBeLessThan(reg("c-cp3-node-metadata").end);
  // Worker units side by side: the last starts before the first is done.
  expect(reg("c-w5-upgrade").start).toBeLessThan(reg("c-w1-node-metadata").end);
  // Each unit still follows its own join, in kubeadm's order.
  for (const n of ["cp2", "w3"]) {
    expect(reg(`c-${n}-upgrade`).start).toBeGreaterThan(reg(`c-${n}-join`).end);
    expect(reg(`c-${n}-node-metadata`).start).toBeGreaterThan(reg(`c-${n}-kubelet`).end);
  }
});

test("a node that joins in this run: its unit's node-side steps and drain have no create (no SSH session), their update is the script; node-metadata runs, a worker's in its join wave's; the rollout batches' drains and the last batch's uncordon have no create", async () => {
  await up(() => false);
  for (const n of ["cp1", "cp2", "w1", "batch_1", "batch_2", "batch_5"]) {
    // On the first control-plane node also the kubeadm-config read and edit (init wrote its featureGates);
    // a worker's own join-token and node-metadata are idle too: its join wave's steps do their work. A
    // worker has no drain of its own: its rollout batch (batch_1: w1) drains; the next batch's drain
    // uncordons it (batch_2's, which runs no command either), the last batch's own uncordon step.
    const own = n.startsWith("batch_") ? [...(n === "batch_5" ? ["uncordon"] : []), "drain"] : ["upgrade", ...(n === "w1" ? [] : ["drain"]), "kubelet"];
    for (const s of [...own, ...(n === "cp1" ? ["cluster-config-read", "cluster-config"] : []), ...(n === "w1" ? ["join-token", "node-metadata"] : [])]) {
      const inputs = reg(`c-${n}-${s}`).inputs;
      expect({ step: `${n}-${s}`, create: inputs.create, update: typeof inputs.update }).toEqual({ step: `${n}-${s}`, create: undefined, update: "string" });
    }
    if (n.startsWith("batch_")) continue;
    if (n !== "w1") expect(typeof reg(`c-${n}-node-metadata`).inputs.create).toBe("string");
    expect(typeof reg(`c-${n}-prepare`).inputs.create).toBe("string");
  }
  for (const s of ["join-material", "node-metadata"]) expect(typeof reg(`c-workers_1-${s}`).inputs.create).toBe("string");
  // Nothing read from an idle step turns into work: the drain keeps, no file change is sent.
  // (the data after the step's values, which head its stdin up to the `---` line)
  const data = (stdin: unknown) => String(stdin).slice(String(stdin).indexOf("\n---\n") + 5);
  expect(data(reg("c-batch_1-drain").inputs.stdin)).toBe("keep - the node joined at the target, nothing rolled out\n");
  expect(data(reg("c-w1-kubelet").inputs.stdin)).toBe("");
  expect(data(reg("c-cp1-cluster-config").inputs.stdin)).toBe("");
});

test("the mocks answer an upgrade step with the node at its target: a joined node's drain keeps,", async () => {
  // Fails where the mocks no longer read the target from the script (they reported no version: every
  // drain then drained, "kubelet unknown -> v1.33.2", and nothing else noticed).
  await up(() => true);
  const data = (stdin: unknown) => String(stdin).slice(String(stdin).indexOf("\n---\n") + 5);
  expect(data(reg("c-batch_1-drain").inputs.stdin)).toMatch(/^keep \S+ kubelet at v1\.33\.2, runtime unchanged\n$/);
  expect(data(reg("c-cp2-drain").inputs.stdin)).toMatch(/^keep \S+ kubelet at v1\.33\.2, runtime unchanged\n$/);
});

test("a step whose create runs holds its script once: no update equal to its create, on a cluster that existed and in one made in this run", async () => {
  // The state keeps a Command's inputs twice (inputs and outputs): the upgrade, kubelet and drain steps
  // of every joined node each carried their script four times (2 to 4 KB each), about a fifth of a 23-node
  // stack's state, which the engine writes whole after every resource operation.
  for (const joined of [() => true, () => false, (n: string) => n.startsWith("cp")]) {
    registrations.splice(0);
    await up(joined);
    const repeated = registrations.filter((r) => r.type === "command:remote:Command" && r.inputs.update !== undefined && r.inputs.update === r.inputs.create).map((r) => r.name);
    expect(repeated).toEqual([]);
    // Where the create is idle, the update is the script (a later rollout runs it).
    for (const r of registrations.filter((x) => x.type === "command:remote:Command" && x.inputs.create === undefined && x.inputs.stdin !== undefined && !x.name.endsWith("-members") && !x.name.endsWith("-init-node"))) {
      expect({ name: r.name, update: typeof r.inputs.update }).toEqual({ name: r.name, update: "string" });
    }
  }
  // A joined worker's upgrade and kubelet steps: the script in the create, no update.
  registrations.splice(0);
  await up(() => true);
  for (const s of ["w2-upgrade", "w2-kubelet", "batch_2-drain"]) expect([typeof reg(`c-${s}`).inputs.create, reg(`c-${s}`).inputs.update]).toEqual(["string", undefined]);
  // A step that ignores changes of its create (a worker's join-token and node-metadata: the create recorded
  // unset while it joined stays so) keeps its script in the update, or a later change would run nothing.
  for (const s of ["w2-join-token", "w2-node-metadata"]) expect(typeof reg(`c-${s}`).inputs.update).toBe("string");
});

test("a rollout batch's drain runs its create when ANY member, of its own or of the batch before (which it uncordons first), had joined before this run, none when none had; the last batch's uncordon when any member had; their triggers are the members", async () => {
  // maxUnavailableWorkers 2: batch_1 w1 w2, batch_2 w3 w4, batch_3 w5. Fails if the create followed the
  // first member only, every member, the node the step runs on (cp1 had joined: every step would run), or
  // its own members only (batch_2's drain would be idle while w2, which it uncordons, may be cordoned).
  const creates = async (joined: string[]) => {
    registrations.splice(0);
    fake.joined = (n) => n.startsWith("cp") || joined.includes(n);
    const c = new Cluster("c", { ...args(), kubernetesVersion: "v1.33.2", maxUnavailableWorkers: 2 });
    await valueOf(c.nodes);
    await settled();
    return [...[1, 2, 3].map((k) => typeof reg(`c-batch_${k}-drain`).inputs.create), typeof reg("c-batch_3-uncordon").inputs.create];
  };
  expect(await creates(["w2"])).toEqual(["string", "string", "undefined", "undefined"]);
  expect(await creates(["w5"])).toEqual(["undefined", "undefined", "string", "string"]);
  expect(await creates(["w4"])).toEqual(["undefined", "string", "string", "undefined"]);
  // An idle create keeps its script as the update (a later rollout runs it); a create that runs is the
  // script, and no update repeats it (pulumi-command runs the create on an update).
  expect(["batch_1-drain", "batch_2-drain", "batch_3-uncordon"].map((id) => [typeof reg(`c-${id}`).inputs.create, typeof reg(`c-${id}`).inputs.update])).toEqual([
    ["undefined", "string"],
    ["string", "undefined"],
    ["undefined", "string"],
  ]);
  expect([1, 2, 3].map((k) => reg(`c-batch_${k}-drain`).inputs.triggers)).toEqual([["w1", "w2"], ["w3", "w4"], ["w5"]]);
  expect(reg("c-batch_3-uncordon").inputs.triggers).toEqual(["w5"]);
  // Only the last batch has an uncordon step of its own.
  expect(registrations.filter((r) => /-uncordon$/.test(r.name)).map((r) => r.name)).toEqual(["c-batch_3-uncordon"]);
});

test("a cluster that had been made: the kubeadm-config read and edit run their script on create", async () => {
  await up(() => true);
  for (const s of ["cluster-config-read", "cluster-config"]) expect(typeof reg(`c-cp1-${s}`).inputs.create).toBe("string");
  expect(String(reg("c-cp1-cluster-config").inputs.stdin)).toMatch(/\nmanifest [A-Za-z0-9+/=]+\n/);
});

test("nodes that had joined keep the line: member workers cordoned one batch at a time (maxUnavailableWorkers 1: one worker each), each upgraded beside the drain of the batch ahead (not after it); a worker that joins the cluster in this run holds its batch's place in the window", async () => {
  await up((n) => n !== "w2");
  for (const n of ["cp1", "w1", "w3"]) expect(typeof reg(`c-${n}-upgrade`).inputs.create).toBe("string");
  expect(reg("c-w2-upgrade").inputs.create).toBeUndefined();
  // A batch whose every member joins in this run rolls nothing out, but its drain uncordons the batch
  // before (w1 had joined), so it runs; every other batch's drain has a member that had joined.
  for (const k of [1, 2, 3, 4, 5]) expect(typeof reg(`c-batch_${k}-drain`).inputs.create).toBe("string");
  expect(typeof reg("c-batch_5-uncordon").inputs.create).toBe("string");
  // The control plane one node at a time (each upgraded once the one before is, beside its drain; drained
  // once its unit is done), before any worker joins or upgrades.
  expect(reg("c-cp2-join-token").start).toBeGreaterThan(reg("c-cp1-upgrade").end);
  expect(reg("c-cp3-join-token").start).toBeGreaterThan(reg("c-cp2-upgrade").end);
  expect(reg("c-cp2-drain").start).toBeGreaterThan(reg("c-cp1-node-metadata").end);
  expect(reg("c-cp3-drain").start).toBeGreaterThan(reg("c-cp2-node-metadata").end);
  // Workers once the last control-plane node is upgraded (its drain, kubelet and uncordon beside the
  // first batch's kubeadm upgrade node), and the first batch's drain once its unit is done.
  for (const w of WORKERS) expect(reg(`c-${w}-join`).start).toBeGreaterThan(reg("c-cp3-upgrade").end);
  expect(reg("c-workers_1-join-material").start).toBeLessThan(reg("c-cp3-node-metadata").end);
  expect(reg("c-batch_1-drain").start).toBeGreaterThan(reg("c-cp3-node-metadata").end);
  // A joined worker's own join-token (whose update runs `kubeadm token create` on cp1, e.g. for a new
  // joinTokenTtl) once every API server is at the target, never beside cp1's `kubeadm upgrade apply`;
  // w2's (joining: idle) waits for nothing more. Fails on 0b0d4a0: every worker's token ran right after
  // cp1's kubeadm-config edit.
  for (const w of ["w1", "w3", "w4", "w5"]) expect(reg(`c-${w}-join-token`).start).toBeGreaterThan(reg("c-cp3-upgrade").end);
  expect(reg("c-w2-join-token").start).toBeLessThan(reg("c-cp1-drain").end);
  // w2 (new, joining a cluster that existed) keeps its place. Each batch's drain (which first uncordons
  // the batch before) waits for the kubelets of the batch before, so one batch is cordoned at a time:
  // w1 is uncordoned, then w2's batch drains nothing, then w3's drain; each upgrade runs beside the drain
  // of the batch ahead, once that drain could start (after what it waits for besides its own members'
  // upgrades: the control plane's last unit, or the kubelets of the batch before it), so at most two
  // batches wait for their kubelet after `kubeadm upgrade node`; the last batch's uncordon waits for its
  // kubelet; each worker's node-metadata for the step that uncordons it. Fails on 7a17c88: each upgrade
  // waited for the drain of the batch ahead to end.
  for (let k = 2; k <= 5; k++) {
    // w2 joins in this run (nothing to uncordon): batch_3's drain and w4's upgrade wait for its join only.
    const kubeletAhead = (j: number) => (j === 0 ? "c-cp3-node-metadata" : `c-w${j}-${j === 2 ? "join" : "kubelet"}`);
    expect(reg(`c-batch_${k}-drain`).start).toBeGreaterThan(reg(kubeletAhead(k - 1)).end);
    expect(reg(`c-w${k}-upgrade`).start).toBeGreaterThan(reg(kubeletAhead(k - 2)).end);
    expect(reg(`c-w${k}-upgrade`).start).toBeLessThan(reg(`c-batch_${k - 1}-drain`).end);
    expect(reg(`c-batch_${k}-drain`).start).toBeGreaterThan(reg(`c-w${k}-upgrade`).end);
    // w2 joins in this run: never cordoned, so its node-metadata waits for no uncordon.
    if (k - 1 !== 2) expect(reg(`c-w${k - 1}-node-metadata`).start).toBeGreaterThan(reg(`c-batch_${k}-drain`).end);
    if (k !== 2) expect(reg(`c-w${k}-kubelet`).start).toBeGreaterThan(reg(`c-batch_${k}-drain`).end);
  }
  expect(reg("c-w2-node-metadata").start).toBeGreaterThan(reg("c-w2-kubelet").end);
  expect(reg("c-batch_5-uncordon").start).toBeGreaterThan(reg("c-w5-kubelet").end);
  expect(reg("c-w5-node-metadata").start).toBeGreaterThan(reg("c-batch_5-uncordon").end);
  expect(reg("c-w3-upgrade").start).toBeGreaterThan(reg("c-w2-join").end);
});

test("the worker window in the plan: a batch's drain comes after the kubelets of the batch ahead (which it uncordons first; after a member's join when it joins in this run), a member's upgrade after what the drain of the batch ahead waits for (so it runs beside that drain)", async () => {
  const { buildPlan } = await import("../../../components/plan/steps");
  const { validateCluster } = await import("../../../components/kubeadm/validate");
  const nodes = ["cp1", ...WORKERS].map((name, i) => ({ name, role: i === 0 ? "control-plane" : "worker", host: `10.0.0.${i + 1}`, port: 22, user: "root", hostGiven: true }));
  for (const size of [1, 2]) {
    const steps = buildPlan(validateCluster({ kubernetesVersion: "v1.34.2", nodes, controlPlaneEndpoint: "10.0.0.1:6443" } as never), { maxUnavailableWorkers: size });
    const waits = (id: string, joined = true) => lineAfter(steps.find((s) => s.id === id)?.line, () => joined);
    // w5 is alone in the last batch: batch_5 (size 1) or batch_3 (size 2: w1 w2, w3 w4, w5).
    const own = size === 1 ? "batch_5" : "batch_3";
    const after = (id: string) => steps.find((s) => s.id === id)?.after;
    const kubeletsAhead = size === 1 ? ["w4-kubelet"] : ["w3-kubelet", "w4-kubelet"];
    // The drain of the batch ahead (batch_4: w4, or batch_2: w3 w4) waits for the kubelets of the batch
    // before it (w3, or w1 w2): so does w5's upgrade.
    const kubeletsTwoAhead = size === 1 ? ["w3-kubelet"] : ["w1-kubelet", "w2-kubelet"];
    // In a cluster that existed, each also after the drain before the batch it waits on.
    const [drainTwoAhead, drainAhead] = size === 1 ? ["batch_3-drain", "batch_4-drain"] : ["batch_1-drain", "batch_2-drain"];
    expect({ size, upgrade: waits("w5-upgrade"), drain: waits(`${own}-drain`), drainAfter: after(`${own}-drain`), kubelet: waits("w5-kubelet") }).toEqual({ size, upgrade: [...kubeletsTwoAhead, drainTwoAhead], drain: [...kubeletsAhead, drainAhead], drainAfter: ["w5-upgrade"], kubelet: [`${own}-drain`] });
    expect(steps.find((s) => s.id === `${own}-drain`)?.uncordonsFirst).toEqual(kubeletsAhead.map((k) => k.replace("-kubelet", "")));
    // A new cluster: the upgrade and the drain wait for those members' joins only.
    const joins = (ks: string[]) => ks.map((k) => k.replace("-kubelet", "-join"));
    expect([waits("w5-upgrade", false), waits(`${own}-drain`, false)]).toEqual([joins(kubeletsTwoAhead), joins(kubeletsAhead)]);
    // A worker's kubelet waits for its batch's drain, and its node metadata for the step that uncordons it,
    // only when it had joined (only then is it drained); else after its own upgrade and kubelet alone.
    expect([after("w5-kubelet"), after("w5-node-metadata"), waits("w5-kubelet", false), waits("w5-node-metadata", false), waits("w5-node-metadata")]).toEqual([["w5-upgrade"], ["w5-kubelet"], [], [], [`${own}-uncordon`]]);
  }
});

test("lineAfter: a node ahead is waited for until its unit is done (or its readyUntil stage), or its join when it joins in this run; `existing` whenever one of its nodes had joined; a line gated by ifJoined waits for nothing when that node joins in this run", () => {
  const ln = (n: string) => ({ node: n, unitDone: `${n}-node-metadata`, joining: `${n}-join`, upgraded: `${n}-upgrade` });
  expect(lineAfter({ ready: [ln("x")] }, () => true)).toEqual(["x-node-metadata"]);
  expect(lineAfter({ ready: [ln("x")] }, () => false)).toEqual(["x-join"]);
  expect(lineAfter({ ready: [ln("x"), ln("y")] }, (n) => n === "y")).toEqual(["x-join", "y-node-metadata"]);
  expect(lineAfter({ ready: [ln("x")], readyUntil: "upgraded" }, () => true)).toEqual(["x-upgrade"]);
  expect(lineAfter({ ready: [ln("x")], ifJoined: "e" }, (n) => n !== "e")).toEqual([]);
  expect(lineAfter({ ready: [ln("x")], ifJoined: "e" }, () => true)).toEqual(["x-node-metadata"]);
  // `existing` whenever the cluster existed, whatever the nodes ahead report; each step once.
  expect(lineAfter({ ready: [ln("x")], existing: { ifAnyJoined: ["cp", "m"], after: ["x-node-metadata", "b-drain"] } }, (n) => n === "m")).toEqual(["x-join", "x-node-metadata", "b-drain"]);
  expect(lineAfter({ ready: [ln("x")], existing: { ifAnyJoined: ["cp"], after: ["x-node-metadata"] } }, () => true)).toEqual(["x-node-metadata"]);
  expect(lineAfter({ ready: [ln("x")], existing: { ifAnyJoined: ["cp", "m"], after: ["b-drain"] } }, () => false)).toEqual(["x-join"]);
  expect(lineAfter(undefined, () => true)).toEqual([]);
});

test("an upgrade leaves init and join alone: their scripts do not name the version (it travels in their ignored stdin)", async () => {
  const scripts = async (version: string) => {
    registrations.splice(0);
    await up(() => true, version);
    return Object.fromEntries(["cp1-init", "cp2-join", "w1-join"].map((id) => [id, [reg(`c-${id}`).inputs.create, reg(`c-${id}`).inputs.update]]));
  };
  const before = await scripts("v1.33.2");
  const after = await scripts("v1.34.2");
  expect(after).toEqual(before);
  expect(JSON.stringify(reg("c-w1-join").inputs.stdin)).toContain("# pulumi-kubeadm: kubernetesVersion v1.34.2");
});

test("the plan grows linearly: each line (a member's upgrade, a batch's drain) names one batch, whatever the number of workers", async () => {
  const { buildPlan } = await import("../../../components/plan/steps");
  const { validateCluster } = await import("../../../components/kubeadm/validate");
  const workers = Array.from({ length: 300 }, (_, i) => ({ name: `w${i}`, role: "worker", host: `10.0.${1 + (i >> 8)}.${i & 255}`, port: 22, user: "root", hostGiven: true }));
  const nodes = [{ name: "cp1", role: "control-plane", host: "10.0.0.1", port: 22, user: "root", hostGiven: true }, ...workers];
  const steps = buildPlan(validateCluster({ kubernetesVersion: "v1.34.2", nodes, controlPlaneEndpoint: "10.0.0.1:6443" } as never), { maxUnavailableWorkers: 3 });
  const lines = (action: string) => steps.flatMap((s) => (s.line && s.action === action && !s.id.startsWith("cp1-") ? [s.line] : []));
  // 100 batches of 3: every drain waits in a line (the first on cp1's unit); every upgrade but the first
  // batch's too, on the same nodes as the drain of the batch ahead (cp1, or the 3 members before it).
  expect([lines("drain").length, lines("upgrade").length]).toEqual([100, 297]);
  expect(Math.max(...[...lines("drain"), ...lines("upgrade")].map((l) => (l.ready ?? []).length))).toBe(3);
  // Each line is a record of at most one batch to wait for (JSON of the line: no list of earlier workers).
  expect(Math.max(...[...lines("drain"), ...lines("upgrade")].map((l) => JSON.stringify(l).length))).toBeLessThan(400);
  expect(steps.find((s) => s.id === "batch_100-drain")?.uncordonsFirst).toEqual(["w294", "w295", "w296"]);
  expect(steps.find((s) => s.id === "w299-upgrade")?.line?.ready?.map((n) => n.node)).toEqual(["w291", "w292", "w293"]);
  expect(steps.find((s) => s.id === "w4-upgrade")?.line?.ready?.map((n) => n.node)).toEqual(["cp1"]);
  expect(steps.find((s) => s.id === "w2-upgrade")?.line).toBeUndefined();
});
