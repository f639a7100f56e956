/**
 * The stand-in command provider's CRUD rules, checked against what pulumi-command 1.2.1 does
 * (commandController.go with pulumi-go-provider's infer defaults), with a fake SSH executor.
 */
import { remoteCommand } from "../../lab/provider/remoteCommand";
import { ExecRequest, ExecResult } from "../../lab/provider/types";
import { SECRET_SIG, SIG_KEY, UNKNOWN, isSecret, secret } from "../../lab/provider/values";

const URN = "urn:pulumi:s::p::kubeadm:index:Cluster$command:remote:Command::lab-cp-1-init";
const conn = { host: "127.0.0.9", port: 22, user: "root", privateKey: secret("KEY") };

function fake(exit = 0, out = "out\n", acceptEnv?: string[]) {
  const calls: ExecRequest[] = [];
  const logs: string[] = [];
  const rc = remoteCommand({
    executor: async (req): Promise<ExecResult> => {
      calls.push(req);
      req.onOutput?.("stdout", out);
      return { kind: "exited", exitCode: exit, stdout: out, stderr: "", combined: out };
    },
    logFor: (urn) => (sev, msg) => logs.push(`${urn.slice(urn.lastIndexOf("::") + 2)} ${sev} ${msg}`),
    dialRetryDelayMs: 1,
    acceptEnv,
  });
  return { rc, calls, logs };
}

test("diff: a changed command is an update, a changed trigger a replacement, nothing changed nothing", async () => {
  const { rc } = fake();
  const olds = { connection: secret(conn), create: "a", triggers: ["v1"], stdout: "x", stderr: "" };
  expect(await rc.diff(olds, { connection: conn, create: "a", triggers: ["v1"] })).toEqual({ changes: false, replaces: [], deleteBeforeReplace: false });
  expect(await rc.diff(olds, { connection: conn, create: "b", triggers: ["v1"] })).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
  expect(await rc.diff(olds, { connection: conn, create: "a", triggers: ["v2"] })).toEqual({ changes: true, replaces: ["triggers"], deleteBeforeReplace: false });
  expect((await rc.diff(olds, { connection: conn, create: UNKNOWN, triggers: ["v1"] })).changes).toBe(true);
  // A secret compared by what it holds; `stdout` (an output) is no input.
  expect((await rc.diff(olds, { connection: { ...conn, privateKey: "KEY" }, create: "a", triggers: ["v1"] })).changes).toBe(false);
});

test("create runs `create` over one session with stdin; the state is the inputs (connection secret) plus stdout without its last newline", async () => {
  const { rc, calls, logs } = fake();
  const r = await rc.create(URN, { connection: conn, create: "echo hi", stdin: secret("TOKEN"), logging: "stdout" });
  expect(calls.map((c) => [c.command, c.stdin, c.privateKey, c.host])).toEqual([["echo hi", "TOKEN", "KEY", "127.0.0.9"]]);
  expect(r.id).toMatch(/^lab-cp-1-init[0-9a-f]{8}$/);
  expect(isSecret(r.outs["connection"])).toBe(true);
  expect(r.outs["stdin"]).toEqual({ [SIG_KEY]: SECRET_SIG, value: "TOKEN" });
  expect([r.outs["stdout"], r.outs["stderr"]]).toEqual(["out", ""]);
  expect(logs).toEqual(["lab-cp-1-init status out"]);
});

test("a failed command throws pulumi-command's text, quoting the command and its output", async () => {
  const { rc } = fake(3, "boom\n");
  await expect(rc.create(URN, { connection: conn, create: "false" })).rejects.toThrow('Process exited with status 3: running "false":\nboom\n');
});

test("update runs `update`, else `create`, with the previous output in the environment unless turned off; no command keeps the old output", async () => {
  const { rc, calls } = fake(0, "out\n", ["LANG", "LC_*", "PULUMI_COMMAND_*"]);
  const olds = { connection: conn, create: "c", stdout: "prev", stderr: "" };
  await rc.update(URN, olds, { connection: conn, create: "c", update: "u" });
  await rc.update(URN, olds, { connection: conn, create: "c2" });
  await rc.update(URN, olds, { connection: conn, create: "c3", addPreviousOutputInEnv: false });
  expect(calls.map((c) => [c.command, c.env])).toEqual([
    ["u", { PULUMI_COMMAND_STDOUT: "prev" }],
    ["c2", { PULUMI_COMMAND_STDOUT: "prev" }],
    ["c3", {}],
  ]);
  const none = await rc.update(URN, olds, { connection: conn, delete: "d" });
  expect([none.outs["stdout"], calls.length]).toEqual(["prev", 3]);
});

test("delete runs the state's `delete` when set, and nothing otherwise", async () => {
  const { rc, calls } = fake();
  await rc.delete(URN, { connection: conn, create: "c", stdout: "" , stderr: "" });
  await rc.delete(URN, { connection: conn, create: "c", delete: "kubeadm reset -f", stdout: "", stderr: "" });
  expect(calls.map((c) => c.command)).toEqual(["kubeadm reset -f"]);
});

test("an environment variable the SSH server does not accept fails the command before it runs", async () => {
  const { rc, calls } = fake();
  await expect(rc.create(URN, { connection: conn, create: "c", environment: { FOO: "1" } })).rejects.toThrow('could not set environment variable "FOO": ssh: setenv failed');
  expect(calls).toEqual([]);
});

test("with the lab's sshd (no AcceptEnv) the previous output is not passed: a warning, and the command runs", async () => {
  const { rc, calls, logs } = fake();
  await rc.update(URN, { connection: conn, create: "c", stdout: "prev", stderr: "" }, { connection: conn, create: "c2" });
  expect(calls.map((c) => [c.command, c.env])).toEqual([["c2", {}]]);
  expect(logs[0]).toMatch(/^lab-cp-1-init warning Unable to set 'PULUMI_COMMAND_STDOUT'/);
});

test("a connection through a proxy is refused, never dialled directly; an empty hostKey is an error", async () => {
  const { rc, calls } = fake();
  await expect(rc.create(URN, { connection: { ...conn, proxy: { host: "10.0.0.1" } }, create: "c" })).rejects.toThrow("does not support connection.proxy");
  await expect(rc.create(URN, { connection: { ...conn, hostKey: "" }, create: "c" })).rejects.toThrow("no key found");
  expect(calls).toEqual([]);
});

test("a failed dial is retried dialErrorLimit times (limit + 1 attempts); a session lost mid-command reports no exit status", async () => {
  let attempts = 0;
  const rc = remoteCommand({
    executor: async (): Promise<ExecResult> => {
      attempts++;
      return { kind: "connect", exitCode: 255, stdout: "", stderr: "", combined: "", message: "Connection refused" };
    },
    logFor: () => () => undefined,
    dialRetryDelayMs: 1,
  });
  await expect(rc.create(URN, { connection: { ...conn, dialErrorLimit: 2 }, create: "c" })).rejects.toThrow("after 3 failed attempts: Connection refused");
  expect(attempts).toBe(3);
  const lost = remoteCommand({
    executor: async (): Promise<ExecResult> => ({ kind: "exited", exitCode: null, stdout: "", stderr: "", combined: "half" }),
    logFor: () => () => undefined,
  });
  await expect(lost.create(URN, { connection: conn, create: "c" })).rejects.toThrow('wait: remote command exited without exit status or exit signal: running "c":\nhalf');
});
