/**
 * The runner honours LAB_DIR (test/lab/README.md: "LAB_DIR in the environment moves the lab folder")
 * and never lets a host be read as an ssh option.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { runProgram } from "../../lab/runner/engine";
import { openSshExecutor } from "../../lab/runner/ssh";
import { FIXTURE, Workspace, baseConfig, fakeExecutor, workspace } from "./helpers";

const HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";

let ws: Workspace;
const savedLabDir = process.env.LAB_DIR;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => {
  if (savedLabDir === undefined) delete process.env.LAB_DIR;
  else process.env.LAB_DIR = savedLabDir;
  fs.rmSync(ws.dir, { recursive: true, force: true });
});

test("runProgram without labDir uses $LAB_DIR: its SSH key, its nodes' host keys, its state folder, and says so", async () => {
  const lab = path.join(ws.dir, "moved-lab");
  fs.mkdirSync(path.join(lab, "nodes", "n1"), { recursive: true });
  fs.mkdirSync(path.join(lab, "ssh"), { recursive: true });
  fs.writeFileSync(path.join(lab, "nodes", "n1", "node.json"), JSON.stringify({ name: "n1", address: "127.0.0.9", hostKey: HOST_KEY }));
  const labKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nLABKEYxyzzy\n-----END OPENSSH PRIVATE KEY-----\n";
  fs.writeFileSync(path.join(lab, "ssh", "id_ed25519"), labKey);
  const { "kubeadm:sshPrivateKey": _dropped, ...config } = baseConfig();
  ws.writeStack(config);
  process.env.LAB_DIR = lab;

  const lines: string[] = [];
  const f = fakeExecutor();
  const r = await runProgram({ mode: "apply", stackFile: ws.stackFile, programPath: FIXTURE, executor: f.exec, log: (l) => lines.push(l), dialRetryDelayMs: 1 });
  expect(r.ok).toBe(true);
  expect(f.calls.length).toBeGreaterThan(0);
  expect(f.calls.every((c) => c.hostKey === HOST_KEY && c.privateKey === labKey)).toBe(true);
  expect(fs.existsSync(path.join(lab, "state", "dev.json"))).toBe(true);
  const injected = lines.filter((l) => l.includes("injected hostKey"));
  expect(injected).toEqual([`lab: injected hostKey of n1 from ${path.join(lab, "nodes", "n1", "node.json")}`]);
});

test("an explicit labDir still wins over $LAB_DIR", async () => {
  process.env.LAB_DIR = path.join(ws.dir, "not-this-one");
  ws.writeStack(baseConfig());
  const r = await runProgram({ mode: "apply", stackFile: ws.stackFile, programPath: FIXTURE, labDir: ws.labDir, executor: fakeExecutor().exec, log: () => undefined });
  expect(r.ok).toBe(true);
  expect(fs.existsSync(path.join(ws.labDir, "state", "dev.json"))).toBe(true);
  expect(fs.existsSync(process.env.LAB_DIR)).toBe(false);
});

test("a host like -oProxyCommand=... is a host name to ssh, never an option (real OpenSSH client)", async () => {
  const marker = path.join(ws.dir, "proxycommand-ran");
  const exec = openSshExecutor({ connectTimeoutSeconds: 2 });
  const r = await exec({
    host: `-oProxyCommand=touch ${marker}`,
    port: 22,
    user: "root",
    command: "true",
  });
  expect(fs.existsSync(marker)).toBe(false);
  expect(r.exitCode).not.toBe(0);
});

test("the destination and the command come after --", async () => {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "fake-ssh-"));
  const argsFile = path.join(bin, "args");
  const fake = path.join(bin, "ssh");
  fs.writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\n`, { mode: 0o755 });
  try {
    const exec = openSshExecutor({ sshPath: fake });
    await exec({ host: "-oX=y", port: 22, user: "root", command: "-c true" });
    expect(fs.readFileSync(argsFile, "utf8").trimEnd().split("\n").slice(-3)).toEqual(["--", "-oX=y", "-c true"]);
  } finally {
    fs.rmSync(bin, { recursive: true, force: true });
  }
});
