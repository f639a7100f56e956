/**
 * Join waves in the component (issue 10): the cluster-side work of fresh worker joins (join material,
 * node metadata) is one step per wave of `maxConcurrentJoins` workers on the first control-plane node,
 * not one per worker; what replaces a wave's steps (their members) and what does not (an upgrade).
 */
import { installMocks, plain, registrations, scriptOf, settled, stdinData, valueOf, type Registration } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";
import type { ClusterArgs, NodeArgs } from "../../../components";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: true, joined: () => false });
  ({ Cluster } = await import("../../../components"));
});

beforeEach(() => registrations.splice(0));

const CPS = [node("cp1", "control-plane", 1), node("cp2", "control-plane", 2), node("cp3", "control-plane", 3)];
const workers = (names: string[]): NodeArgs[] => names.map((n, i) => node(n, "worker", 10 + i));
const W = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `w${from + i}`);

/** The registered commands of one program, by name. */
async function program(args: Partial<ClusterArgs>, name = "c"): Promise<Map<string, Registration>> {
  registrations.splice(0);
  const c = new Cluster(name, clusterArgs({ kubernetesVersion: "v1.34.2", ...args }));
  await valueOf(c.nodes);
  await settled();
  return new Map(registrations.filter((r) => r.type === "command:remote:Command").map((r) => [r.name, r]));
}

const waveSteps = (m: Map<string, Registration>) => [...m.keys()].filter((n) => /^c-workers_/.test(n)).sort();
const inputsOf = (r: Registration | undefined) => JSON.stringify(plain(r?.inputs));

test("3 control-plane nodes + 20 workers, maxConcurrentJoins 10: 2 join waves, each ONE join-material and ONE node-metadata step on cp1; every worker joins with its wave's material", async () => {
  const m = await program({ maxConcurrentJoins: 10, nodes: [...CPS, ...workers(W(1, 20))] });
  expect(waveSteps(m)).toEqual(["c-workers_1-join-material", "c-workers_1-node-metadata", "c-workers_2-join-material", "c-workers_2-node-metadata"]);
  expect(plain(m.get("c-workers_1-join-material")?.inputs.triggers)).toEqual(W(1, 10));
  expect(plain(m.get("c-workers_2-node-metadata")?.inputs.triggers)).toEqual(W(11, 20));
  // The commands that run on cp1 for this new cluster (create set): its own 3 (prepare, init, node-metadata,
  // which prints the admin kubeconfig; the kubeadm-config read and edit run none after init), 2 per control-plane join, 2 per wave, and the members record writing the
  // node list. A worker's own join-token and node-metadata run no command when it joins.
  const onCp1 = [...m.values()].filter((r) => (plain(r.inputs.connection) as { host: string }).host === "10.0.0.1" && r.inputs.create !== undefined).map((r) => r.name.slice(2));
  expect(onCp1.sort()).toEqual(
    [
      "cp1-prepare", "cp1-init", "cp1-node-metadata",
      "cp2-join-token", "cp2-node-metadata", "cp3-join-token", "cp3-node-metadata",
      "workers_1-join-material", "workers_1-node-metadata", "workers_2-join-material", "workers_2-node-metadata",
      "members",
    ].sort(),
  );
  // One token per wave: w12 joins with wave 2's material (its stdin), not its own join-token's (empty).
  const material = scriptOf(String(m.get("c-workers_2-join-material")?.inputs.create));
  expect(material.match(/^pk_join_material '2h0m0s' 7200 no$/gm)).toHaveLength(1);
  expect(material).toContain("pk_claim_once 'w12-join-token' 'c-w12-join-token'");
  expect(stdinData(m.get("c-w12-join")?.inputs.stdin)).toContain("token: abcdef.0123456789abcdef");
  const metadata = scriptOf(String(m.get("c-workers_2-node-metadata")?.inputs.create));
  for (const w of W(11, 20)) expect(metadata).toContain(`pk_claim_once '${w}-node-metadata' 'c-${w}-node-metadata'`);
  // Order: each join after the join 10 places before it (a sliding window), not after the whole wave
  // before; wave 2's material after the join its first member waits for; a wave's node-metadata after its members' own.
  const at = (n: string) => m.get(`c-${n}`) as Registration;
  for (let i = 11; i <= 20; i++) expect(at(`w${i}-join`).start).toBeGreaterThan(at(`w${i - 10}-join`).end);
  // In the plan: wave 2's material waits for w1's join (on 73a2577 for all of wave 1's; on 54e68be for
  // none, so every wave's bootstrap token was made at once, hours before a late wave joins or before a
  // re-run after a failed join), and w11 joins once w1 has, not once the whole first wave has.
  const { buildPlan, validateCluster } = await import("../../../components");
  const plan = buildPlan(validateCluster(clusterArgs({ kubernetesVersion: "v1.34.2", nodes: [...CPS, ...workers(W(1, 20))] }) as never), { maxConcurrentJoins: 10 });
  const after = (id: string) => plan.find((s) => s.id === id)?.after ?? [];
  expect(after("workers_2-join-material").filter((a) => a.endsWith("-join"))).toEqual(["w1-join"]);
  expect(after("workers_1-join-material").filter((a) => a.endsWith("-join"))).toEqual([]);
  expect(after("w11-join").filter((a) => a.endsWith("-join"))).toEqual(["w1-join"]);
  for (const w of W(11, 20)) expect(at(`${w}-join`).start).toBeGreaterThan(at("workers_2-join-material").end);
  for (const w of W(11, 20)) expect(at("workers_2-node-metadata").start).toBeGreaterThan(at(`${w}-node-metadata`).end);
  // At no moment more than 10 worker joins in flight.
  const joins = [...m.values()].filter((r) => /^c-w[0-9]+-join$/.test(r.name));
  for (const j of joins) expect(joins.filter((k) => k.start <= j.start && k.end > j.start).length).toBeLessThanOrEqual(10);
});

test("a wave's node-metadata claims every member before its first edit: an edit failing midway (a member's Node missing) leaves no member unclaimed, whose removal must still drain it", async () => {
  const m = await program({ maxConcurrentJoins: 10, nodes: [...CPS, ...workers(W(1, 3))] });
  const metadata = scriptOf(String(m.get("c-workers_1-node-metadata")?.inputs.create));
  const lastClaim = Math.max(...W(1, 3).map((w) => metadata.indexOf(`pk_claim_once '${w}-node-metadata' 'c-${w}-node-metadata'`)));
  expect(lastClaim).toBeGreaterThan(0);
  // On 27ae950 each claim followed its member's edits: w1's failing `kubectl get node` left w2 and w3 unclaimed.
  expect(metadata.indexOf("pk_node_metadata ")).toBeGreaterThan(lastClaim);
});

test("a worker added: only the changed wave's steps change (a new wave here), no other wave's inputs", async () => {
  const before = await program({ maxConcurrentJoins: 10, nodes: [...CPS, ...workers(W(1, 20))] });
  const after = await program({ maxConcurrentJoins: 10, nodes: [...CPS, ...workers(W(1, 21))] });
  const changed = waveSteps(after).filter((n) => inputsOf(before.get(n)) !== inputsOf(after.get(n)));
  expect(changed).toEqual(["c-workers_3-join-material", "c-workers_3-node-metadata"]);
});

test("a member removed from the middle: its wave and the later ones have new triggers (a replacement: their create runs again), none has a delete; earlier waves are unchanged", async () => {
  const before = await program({ maxConcurrentJoins: 5, nodes: [...CPS, ...workers(W(1, 15))] });
  const after = await program({ maxConcurrentJoins: 5, nodes: [...CPS, ...workers(W(1, 15).filter((w) => w !== "w7"))] });
  const triggers = (m: Map<string, Registration>, n: string) => plain(m.get(n)?.inputs.triggers);
  expect(waveSteps(after).filter((n) => JSON.stringify(triggers(before, n)) !== JSON.stringify(triggers(after, n)))).toEqual([
    "c-workers_2-join-material", "c-workers_2-node-metadata", "c-workers_3-join-material", "c-workers_3-node-metadata",
  ]);
  expect(triggers(after, "c-workers_2-join-material")).toEqual(["w6", "w8", "w9", "w10", "w11"]);
  expect(inputsOf(after.get("c-workers_1-join-material"))).toBe(inputsOf(before.get("c-workers_1-join-material")));
  for (const n of waveSteps(after)) expect({ n, delete: after.get(n)?.inputs.delete }).toEqual({ n, delete: undefined });
});

test("an upgrade changes no wave step's inputs (it opens no session for them), nor a worker's node-metadata; a control-plane node's node-metadata and the last rollout batch's uncordon change", async () => {
  const nodes = [...CPS, ...workers(W(1, 12))];
  const from = await program({ kubernetesVersion: "v1.34.2", nodes });
  const to = await program({ kubernetesVersion: "v1.35.0", nodes });
  expect(waveSteps(to)).toHaveLength(4);
  for (const n of waveSteps(to)) expect({ n, same: inputsOf(from.get(n)) === inputsOf(to.get(n)) }).toEqual({ n, same: true });
  // A worker's own node-metadata holds no version (the next batch's drain, or the last batch's uncordon,
  // uncordons it after a rollout): unchanged. A control-plane node's holds it (it uncordons the node), and
  // so does the last batch's uncordon (the earlier batches have none: their next batch's drain does it).
  // Fails on 150ba08: a worker's node-metadata carried the version.
  for (const w of ["w1", "w12"]) expect({ w, same: inputsOf(from.get(`c-${w}-node-metadata`)) === inputsOf(to.get(`c-${w}-node-metadata`)) }).toEqual({ w, same: true });
  expect(inputsOf(from.get("c-cp1-node-metadata"))).not.toBe(inputsOf(to.get("c-cp1-node-metadata")));
  expect(to.has("c-batch_1-uncordon")).toBe(false);
  for (const b of ["batch_12"]) {
    expect(to.has(`c-${b}-uncordon`)).toBe(true);
    expect(inputsOf(from.get(`c-${b}-uncordon`))).not.toBe(inputsOf(to.get(`c-${b}-uncordon`)));
  }
});

test("gone workers are in no wave; a renamed cluster's wave claims take over the members' claims under the old name", async () => {
  const m = await program({ nodes: [...CPS, ...workers(["w1", "w2"]).map((n) => (n.name === "w1" ? { ...n, gone: true } : n))] });
  expect(plain(m.get("c-workers_1-join-material")?.inputs.triggers)).toEqual(["w2"]);
  registrations.splice(0);
  const c = new Cluster("prod", clusterArgs({ kubernetesVersion: "v1.34.2", nodes: [...CPS, ...workers(["w1"])] }), { aliases: [{ name: "old" }] });
  await valueOf(c.nodes);
  await settled();
  const created = registrations.find((r) => r.name === "prod-workers_1-join-material");
  expect(scriptOf(String(created?.inputs.create))).toContain("pk_claim_once 'w1-join-token' 'prod-w1-join-token' 'old-w1-join-token'");
  expect(String(plain(created?.inputs.stdin))).toBe("pulumi-kubeadm step join-material of join wave workers_1 on node cp1\n---\n");
});
