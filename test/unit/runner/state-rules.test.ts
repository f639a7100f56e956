/**
 * The runner's state rules on the fixture program (two commands per node), with a fake executor:
 * what a second `pulumi up` would run under the command provider's rules.
 */
import * as fs from "fs";
import * as path from "path";
import { runProgram } from "../../lab/runner/engine";
import { RunResult } from "../../lab/runner/types";
import { FIXTURE, PRIVATE_KEY, TOKEN, Workspace, baseConfig, fakeExecutor, workspace } from "./helpers";

let ws: Workspace;
let lines: string[];

beforeEach(() => {
  ws = workspace();
  lines = [];
});
afterEach(() => fs.rmSync(ws.dir, { recursive: true, force: true }));

async function run(mode: "preview" | "apply" | "destroy", exec: ReturnType<typeof fakeExecutor>["exec"]): Promise<RunResult> {
  return runProgram({
    mode,
    stackFile: ws.stackFile,
    programPath: FIXTURE,
    statePath: ws.statePath,
    labDir: ws.labDir,
    executor: exec,
    log: (l) => lines.push(l),
    dialRetryDelayMs: 1,
  });
}

/** Applies the base config, then the base config with `extra`: returns the second run and its calls. */
async function applyThenChange(extra: Record<string, unknown>, fail?: Parameters<typeof fakeExecutor>[0]) {
  ws.writeStack(baseConfig());
  await run("apply", fakeExecutor().exec);
  ws.writeStack(baseConfig(extra));
  const f = fakeExecutor(fail);
  return { r: await run("apply", f.exec), calls: f.calls };
}

async function expectNoOpRun(): Promise<void> {
  const f = fakeExecutor();
  await run("apply", f.exec);
  expect(f.calls).toHaveLength(0);
}

function op(r: RunResult, name: string): string | undefined {
  return r.resources.find((x) => x.name === name)?.op;
}

test("first apply creates in dependency order; an unchanged second apply runs nothing", async () => {
  ws.writeStack(baseConfig());
  const f1 = fakeExecutor();
  const r1 = await run("apply", f1.exec);
  expect(r1.ok).toBe(true);
  expect(f1.calls.map((c) => c.command)).toEqual([
    "echo hello from $(hostname)",
    'read t; echo "got hello from fakehost and $t"',
  ]);
  expect(f1.calls[1]!.stdin).toBe(TOKEN);
  expect(f1.calls[0]!.privateKey).toBe(PRIVATE_KEY);
  expect(f1.calls[0]!.hostKey).toBeUndefined();
  expect(r1.sshSessions).toEqual({ "127.0.0.9:22": 2 });
  expect(r1.outputs).toEqual({ firstOut: ["hello from fakehost"], secondOut: "[secret]" });
  expect(lines).toContain("fx-n1-first:   | hello from fakehost");

  const f2 = fakeExecutor();
  const r2 = await run("apply", f2.exec);
  expect(r2.ok).toBe(true);
  expect(f2.calls).toHaveLength(0);
  expect(r2.resources.map((r) => [r.name, r.op])).toEqual([
    ["fx-n1-first", "same"],
    ["fx-n1-second", "same"],
  ]);
  expect(r2.outputs).toEqual({ firstOut: ["hello from fakehost"], secondOut: "[secret]" });
  expect(r2.sshSessions).toEqual({});
});

test("preview runs nothing and tells what apply would do", async () => {
  ws.writeStack(baseConfig());
  const f = fakeExecutor();
  const p1 = await run("preview", f.exec);
  expect(f.calls).toHaveLength(0);
  expect(p1.resources.map((r) => [r.name, r.op])).toEqual([
    ["fx-n1-first", "create"],
    ["fx-n1-second", "create"],
  ]);
  expect(fs.existsSync(ws.statePath)).toBe(false);
  expect(lines).toContain("fx-n1-first: create");
  await run("apply", f.exec);
  ws.writeStack(baseConfig({ "kubeadm:trigger": "2", "kubeadm:second": false }));
  const before = f.calls.length;
  const p2 = await run("preview", f.exec);
  expect(f.calls.length).toBe(before);
  expect(p2.resources.map((r) => [r.name, r.op])).toEqual([
    ["fx-n1-first", "replace"],
    ["fx-n1-second", "delete"],
  ]);
});

test("a changed create input runs create again (no update command), and flows to dependents", async () => {
  const { r, calls } = await applyThenChange({ "kubeadm:message": "bonjour" });
  expect(r.ok).toBe(true);
  expect(op(r, "fx-n1-first")).toBe("update");
  expect(op(r, "fx-n1-second")).toBe("update");
  expect(r.resources[0]!.ran).toEqual(["update (create again)"]);
  expect(calls.map((c) => c.command)).toEqual([
    "echo bonjour from $(hostname)",
    'read t; echo "got bonjour from fakehost and $t"',
  ]);
  // recorded: a third run is a no-op
  await expectNoOpRun();
});

test("changed triggers replace: the new create runs, then the OLD delete, after the program settled", async () => {
  const { r, calls } = await applyThenChange({ "kubeadm:trigger": "2" });
  expect(r.ok).toBe(true);
  expect(op(r, "fx-n1-first")).toBe("replace");
  // the first's stdout did not change, so the second is unchanged
  expect(op(r, "fx-n1-second")).toBe("same");
  expect(calls.map((c) => c.command)).toEqual(["echo hello from $(hostname)", "echo deleting first"]);
  const del = r.resources.find((x) => x.op === "delete")!;
  expect(del.name).toBe("fx-n1-first");
  expect(del.ran).toEqual(["delete (old, replaced)"]);
  const state = JSON.parse(fs.readFileSync(ws.statePath, "utf8"));
  expect(state.pendingDeletes).toEqual([]);
  expect(Object.keys(state.resources).sort()).toEqual(["fx-n1-first", "fx-n1-second"]);
  await expectNoOpRun();
});

test("a resource the program no longer registers has its delete run and leaves the state", async () => {
  const { r, calls } = await applyThenChange({ "kubeadm:second": false });
  expect(r.ok).toBe(true);
  expect(calls.map((c) => c.command)).toEqual(["echo deleting second"]);
  expect(calls[0]!.stdin).toBe(TOKEN); // the old props, stdin included, as the provider's Delete
  expect(op(r, "fx-n1-second")).toBe("delete");
  const state = JSON.parse(fs.readFileSync(ws.statePath, "utf8"));
  expect(Object.keys(state.resources)).toEqual(["fx-n1-first"]);
});

test("a failed create is not recorded, stops the run, and runs again next time", async () => {
  ws.writeStack(baseConfig());
  const bad = fakeExecutor({ fail: (req) => req.command.startsWith("read t") });
  const r1 = await run("apply", bad.exec);
  expect(r1.ok).toBe(false);
  const second = r1.resources.find((x) => x.name === "fx-n1-second")!;
  expect(second.ok).toBe(false);
  expect(second.error).toContain("fx-n1-second: create failed: Process exited with status 3: running ");
  // logging "none": the output is not quoted in the error, nor printed
  expect(second.error).toContain('[output not shown: logging is "none"]');
  expect(lines.join("\n")).not.toContain("boom");
  expect(lines.some((l) => l.startsWith("fx-n1-second: create FAILED"))).toBe(true);
  const state = JSON.parse(fs.readFileSync(ws.statePath, "utf8"));
  expect(Object.keys(state.resources)).toEqual(["fx-n1-first"]);

  const good = fakeExecutor();
  const r2 = await run("apply", good.exec);
  expect(r2.ok).toBe(true);
  expect(good.calls.map((c) => c.command)).toEqual(['read t; echo "got hello from fakehost and $t"']);
  expect(op(r2, "fx-n1-first")).toBe("same");
  expect(op(r2, "fx-n1-second")).toBe("create");
});

test("a failed update keeps the old record", async () => {
  const { r, calls } = await applyThenChange({ "kubeadm:message": "hola" }, { fail: (req) => req.command.startsWith("echo hola") });
  expect(r.ok).toBe(false);
  expect(r.resources.find((x) => x.name === "fx-n1-first")!.error).toContain("hola");
  // nothing after the failure ran
  expect(calls).toHaveLength(1);
  // back to the old config: nothing to do, the old record is intact
  ws.writeStack(baseConfig());
  const f = fakeExecutor();
  const r2 = await run("apply", f.exec);
  expect(f.calls).toHaveLength(0);
  expect(r2.outputs["firstOut"]).toEqual(["hello from fakehost"]);
});

test("destroy runs every delete in reverse order and empties the state", async () => {
  ws.writeStack(baseConfig({ "kubeadm:nodes": [{ name: "n1", host: "127.0.0.9" }, { name: "n2", host: "127.0.0.10", port: 2222 }] }));
  await run("apply", fakeExecutor().exec);
  const f = fakeExecutor();
  const r = await run("destroy", f.exec);
  expect(r.ok).toBe(true);
  const order = r.resources.map((x) => x.name);
  expect(order).toHaveLength(4);
  for (const n of ["n1", "n2"]) expect(order.indexOf(`fx-${n}-second`)).toBeLessThan(order.indexOf(`fx-${n}-first`));
  expect(f.calls.filter((c) => c.command === "echo deleting first")).toHaveLength(2);
  expect(r.sshSessions).toEqual({ "127.0.0.9:22": 2, "127.0.0.10:2222": 2 });
  const state = JSON.parse(fs.readFileSync(ws.statePath, "utf8"));
  expect(state.resources).toEqual({});
});

test("secrets never reach printed output or the state file in plain text", async () => {
  ws.writeStack(baseConfig());
  const r = await run("apply", fakeExecutor().exec);
  ws.writeStack(baseConfig({ "kubeadm:second": false }));
  await run("apply", fakeExecutor().exec);
  const printed = lines.join("\n") + JSON.stringify(r);
  const stateText = fs.readFileSync(ws.statePath + "", "utf8");
  for (const secret of [TOKEN, "FAKEKEYMATERIALxyzzy0123456789", `got hello from fakehost and ${TOKEN}`]) {
    expect(printed).not.toContain(secret);
    expect(stateText).not.toContain(secret);
  }
  expect(fs.statSync(ws.statePath).mode & 0o777).toBe(0o600);
  expect(fs.statSync(path.join(path.dirname(ws.statePath), "state.key")).mode & 0o777).toBe(0o600);
});

test("a secure: value is refused with a clear message", async () => {
  ws.writeStack(baseConfig({ "kubeadm:token": { secure: "AAABAxyz" } }));
  await expect(run("apply", fakeExecutor().exec)).rejects.toThrow(/kubeadm:token is an encrypted "secure:" value/);
});

test("the lab key and each node's host key are injected when the stack file has none", async () => {
  fs.mkdirSync(path.join(ws.labDir, "ssh"), { recursive: true });
  fs.writeFileSync(path.join(ws.labDir, "ssh", "id_ed25519"), "LAB-PRIVATE-KEY-CONTENTS\n");
  fs.mkdirSync(path.join(ws.labDir, "nodes", "n1"), { recursive: true });
  fs.writeFileSync(
    path.join(ws.labDir, "nodes", "n1", "node.json"),
    JSON.stringify({ name: "n1", address: "127.0.0.9", port: 22, runtimes: [], hostKey: "ssh-ed25519 AAAAHOSTKEY", pids: [] }),
  );
  const cfg = baseConfig({ "kubeadm:nodes": [{ name: "n1", host: "127.0.0.9" }, { name: "n2", host: "127.0.0.10", hostKey: "ssh-ed25519 PINNED" }] });
  delete cfg["kubeadm:sshPrivateKey"];
  ws.writeStack(cfg);
  const f = fakeExecutor();
  const r = await run("apply", f.exec);
  expect(r.ok).toBe(true);
  const byHost = (h: string) => f.calls.find((c) => c.host === h)!;
  expect(byHost("127.0.0.9").hostKey).toBe("ssh-ed25519 AAAAHOSTKEY");
  expect(byHost("127.0.0.10").hostKey).toBe("ssh-ed25519 PINNED");
  expect(byHost("127.0.0.9").privateKey).toBe("LAB-PRIVATE-KEY-CONTENTS\n");
  expect(lines.join("\n")).not.toContain("LAB-PRIVATE-KEY-CONTENTS");
  expect(lines).toContain("lab: injected kubeadm:sshPrivateKey from " + path.join(ws.labDir, "ssh", "id_ed25519"));
});
