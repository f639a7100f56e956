/**
 * A step that finds no shell library on its machine fails before doing anything, and its message names
 * what to replace: the prepare step of the node the step RUNS ON (the first control-plane node for the
 * steps that run there for another node), which every command text gives its script as `$1`, by the
 * node's name: a renamed Cluster changes no command text.
 */
import { commandParts, installMocks, plain, registrations, settled, valueOf } from "../helpers/mocks";
import { clusterArgs } from "../helpers/fixtures";
import { runBash, sandbox } from "../scripts/bash";
import { LIBRARY_SHA256 } from "../../../components/scripts/library";
import { join } from "path";
import { existsSync } from "fs";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  ({ Cluster } = await import("../../../components"));
});

/** Every Command the cluster registered: its name, the node its connection dials, its command texts. */
async function commands(name = "c", opts: import("@pulumi/pulumi").ComponentResourceOptions = {}): Promise<Array<{ name: string; runsOn: string; texts: string[] }>> {
  const args = clusterArgs();
  const hosts = new Map(args.nodes.map((n) => [n.host as string, n.name as string]));
  const from = registrations.length;
  const c = new Cluster(name, args, opts);
  await valueOf(c.nodes);
  await settled();
  return registrations
    .slice(from)
    .filter((r) => r.type === "command:remote:Command")
    .map((r) => {
      const inputs = plain(r.inputs) as { connection?: { host?: string }; create?: string; update?: string; delete?: string };
      const texts = [inputs.create, inputs.update, inputs.delete].filter((t): t is string => typeof t === "string" && t !== "");
      return { name: r.name, runsOn: hosts.get(inputs.connection?.host ?? "") ?? "?", texts };
    });
}

test("every command text gives its script the node it runs on", async () => {
  const all = await commands();
  const withTexts = all.filter((c) => c.texts.length > 0);
  // Steps on the nodes, steps on the first control-plane node for other nodes, the members record.
  expect(withTexts.length).toBeGreaterThan(30);
  for (const c of withTexts) {
    for (const t of c.texts) expect({ name: c.name, args: commandParts(t).args }).toEqual({ name: c.name, args: [c.runsOn] });
  }
  // A step about a worker that runs on the first control-plane node names that node's prepare step.
  const metadata = all.find((c) => c.name === "c-w1-node-metadata");
  expect(metadata?.runsOn).toBe("cp1");
});

test("a renamed Cluster (aliases) changes no command text: only the steps that record their owner update", async () => {
  const before = new Map((await commands("c")).map((c) => [c.name.replace(/^c-/, ""), c.texts]));
  const after = await commands("renamed", { aliases: [{ name: "c" }] });
  const changed = after.filter((c) => JSON.stringify(c.texts) !== JSON.stringify(before.get(c.name.replace(/^renamed-/, "")))).map((c) => c.name.replace(/^renamed-/, ""));
  // The node's own prepare, upgrade and kubelet steps and the rollout batches' steps keep their texts.
  for (const kept of ["w1-prepare", "w1-upgrade", "w1-kubelet", "cp1-upgrade", "batch_1-drain"]) expect(changed).not.toContain(kept);
  expect(changed).toContain("w1-join");
});

test.each([
  ["c-w1-node-metadata", "w1", "cp1"],
  ["c-w1-kubelet", "w1", "w1"],
  ["c-members", "cp1", "cp1"],
])("%s with no library fails before doing anything, naming %s, the machine %s and the replace of its prepare step", async (name, node, runsOn) => {
  const box = sandbox();
  const lib = join(box.state, "lib", `${LIBRARY_SHA256}.sh`);
  box.stub("kubectl", `touch ${join(box.dir, "ran")}`);
  box.stub("systemctl", `touch ${join(box.dir, "ran")}`);
  const c = (await commands()).find((x) => x.name === name);
  const { script, args } = commandParts(c?.texts[0] as string);
  const r = runBash(script, { state: box.state, lib, bin: box.bin, args, stdin: "unix:///run/containerd/containerd.sock\n" });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^pulumi-kubeadm: node ${node}: ${lib.replace(/[.]/g, "\\.")} missing on ${runsOn}, nothing changed: pulumi up --replace '<URN of <cluster>-${runsOn}-prepare>' installs it again and finishes the work\n$`));
  expect(existsSync(join(box.dir, "ran"))).toBe(false);
});
