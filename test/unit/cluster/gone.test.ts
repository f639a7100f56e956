/**
 * A worker whose machine is gone (`gone: true`): its Node object is deleted from the first control-plane
 * node, nothing is made to run on the machine, and its steps are kept and retained on delete.
 */
jest.mock("@pulumi/command", () => require("../helpers/recordingCommand").recordingCommandModule());

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
    ["prepare", "join-token", "join", "upgrade", "drain", "kubelet", "node-metadata"].map((a) => `c-w2-${a}`).sort(),
  );
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
