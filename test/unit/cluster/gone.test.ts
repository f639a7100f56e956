/**
 * A worker whose machine is gone (`gone: true`): its Node object is deleted from the first control-plane
 * node, nothing is made to run on the machine, and its steps are kept and retained on delete. And the
 * other create a later run must leave alone: a worker's own join-token, whose create ran nothing while
 * its node joined in a wave, is not updated by the next run that sees the node joined (an upgrade re-runs
 * prepare): its update would make a bootstrap token on the first control-plane node for nobody (e2e:
 * test/lab/e2e/waves.test.ts).
 */
jest.mock("../../../components/cluster/remoteCommand", () => require("../helpers/recordingCommand").recordingCommandModule());

import { madeCommands } from "../helpers/recordingCommand";
import { installMocks, settled, valueOf } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";

let Cluster: typeof import("../../../components").Cluster;
const made = madeCommands();

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  ({ Cluster } = await import("../../../components"));
});

test("a gone worker: forget deletes its Node from cp1; its steps keep their recorded inputs, run nothing and are retained on delete", async () => {
  const args = clusterArgs();
  args.nodes = args.nodes.map((n) => (n.name === "w2" ? { ...n, gone: true } : n));
  const c = new Cluster("c", args);
  const plan = await valueOf(c.plan);
  await valueOf(c.nodes);
  await settled();
  const forget = made.find((m) => m.name === "c-w2-forget");
  expect(String(forget?.args.create)).toContain("delete node");
  expect(String(forget?.args.create)).toContain("w2");
  const frozen = made.filter((m) => m.name.startsWith("c-w2-") && m.name !== "c-w2-forget");
  expect(frozen.map((m) => m.name).sort()).toEqual(
    ["prepare", "join-token", "join", "upgrade", "kubelet", "node-metadata"].map((a) => `c-w2-${a}`).sort(),
  );
  // It is in no rollout batch: w1 alone makes batch_1, and there is no second batch.
  expect(made.filter((m) => m.name.startsWith("c-batch_")).map((m) => [m.name, m.args.triggers])).toEqual([
    ["c-batch_1-drain", ["w1"]],
    ["c-batch_1-uncordon", ["w1"]],
  ]);
  for (const m of frozen) {
    expect({ name: m.name, commands: ["create", "update", "delete", "stdin"].filter((k) => m.args[k] !== undefined) }).toEqual({ name: m.name, commands: [] });
    expect({ name: m.name, retain: m.opts.retainOnDelete, ignores: (m.opts.ignoreChanges as string[]).includes("create") }).toEqual({ name: m.name, retain: true, ignores: true });
  }
  // The plan says so; the other nodes' steps are as usual.
  const { buildPlan, describePlan, validateCluster } = await import("../../../components");
  const steps = describePlan("c", buildPlan(validateCluster(args as never)));
  expect(steps.find((l) => l.includes(" c-w2-forget "))).toContain("the machine is gone: delete its Node object");
  expect(plan).toEqual([expect.stringContaining('node "w2" is marked gone: this up deletes its Node object')]);
  expect(String(made.find((m) => m.name === "c-w1-join")?.opts.retainOnDelete)).toBe("undefined");
});

test("gone on a control-plane node is refused, saying what to do", () => {
  const args = clusterArgs({ nodes: [node("cp1", "control-plane", 1), node("cp2", "control-plane", 2, { gone: true })] });
  expect(() => new Cluster("c", args)).toThrow('node "cp2": gone: only a worker\'s machine can be written off this way');
});

test("retainOnDelete on the Cluster reaches every step (Pulumi passes only protect on to children)", async () => {
  made.splice(0);
  const c = new Cluster("r", clusterArgs(), { retainOnDelete: true });
  await valueOf(c.nodes);
  await settled();
  const steps = made.filter((m) => m.name.startsWith("r-") && m.args.create !== undefined);
  expect(steps.length).toBeGreaterThan(30);
  expect(steps.filter((m) => m.opts.retainOnDelete !== true).map((m) => m.name)).toEqual([]);
});

test("a worker's join-token and node-metadata ignore a change of their create alone (unset while joining, the script later); the other steps do not", async () => {
  made.splice(0);
  const c = new Cluster("c", clusterArgs());
  await valueOf(c.nodes);
  await settled();
  const ignores = (name: string) => {
    const m = made.find((x) => x.name === name);
    if (m === undefined) throw new Error(`no command ${name}`);
    return ((m.opts.ignoreChanges as string[] | undefined) ?? []).includes("create");
  };
  const workers = made.filter((m) => /^c-w[0-9]+-join-token$/.test(m.name)).map((m) => m.name);
  expect(workers.length).toBeGreaterThan(0);
  // Fails on 27ae950: no ignoreChanges on a worker's join-token.
  for (const name of workers) expect({ name, ignores: ignores(name) }).toEqual({ name, ignores: true });
  // The update still carries the script, so a real change of it (a rename's claims) still updates the step.
  for (const name of workers) expect(String(made.find((m) => m.name === name)?.args.update)).toContain("pk_join_material ");
  // A worker's node-metadata likewise (its join wave made its edits; fails on c3dac96, where it ran on the
  // worker's first upgrade), its update still the script (a label change runs it).
  const metadata = made.filter((m) => /^c-w[0-9]+-node-metadata$/.test(m.name)).map((m) => m.name);
  expect(metadata.length).toBe(workers.length);
  for (const name of metadata) expect({ name, ignores: ignores(name), update: String(made.find((m) => m.name === name)?.args.update).includes("pk_node_metadata ") }).toEqual({ name, ignores: true, update: true });
  // A control-plane node's join-token and node-metadata, and the worker's other idle steps, keep their usual diff.
  for (const name of ["c-cp2-join-token", "c-cp2-node-metadata", "c-w1-upgrade", "c-w1-kubelet", "c-batch_1-drain", "c-batch_2-drain", "c-batch_2-uncordon"]) expect({ name, ignores: ignores(name) }).toEqual({ name, ignores: false });
});
