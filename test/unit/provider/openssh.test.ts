/**
 * The real OpenSSH executor against a throwaway sshd this test starts on 127.0.0.77:2299 with temp
 * host and client keys (stopped by pid afterwards), and the runner end to end over it.
 */
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { openSshExecutor } from "../../lab/runner/ssh";
import { runProgram } from "../../lab/runner/engine";
import { FIXTURE, TOKEN } from "./helpers";

const HOST = "127.0.0.77";
const PORT = 2299;
let dir: string;
let sshd: ChildProcess;
let clientKey: string;
let hostPub: string;

function waitForPort(host: string, port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const s = net.connect(port, host, () => {
        s.destroy();
        resolve();
      });
      s.on("error", () => {
        s.destroy();
        if (Date.now() > until) reject(new Error(`sshd did not listen on ${host}:${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "runner-sshd-"));
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, "host_key")]);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, "client_key")]);
  clientKey = fs.readFileSync(path.join(dir, "client_key"), "utf8");
  hostPub = fs.readFileSync(path.join(dir, "host_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
  fs.copyFileSync(path.join(dir, "client_key.pub"), path.join(dir, "authorized_keys"));
  fs.mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  fs.writeFileSync(
    path.join(dir, "sshd_config"),
    [
      `ListenAddress ${HOST}:${PORT}`,
      `HostKey ${path.join(dir, "host_key")}`,
      `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      `PidFile ${path.join(dir, "sshd.pid")}`,
      "AcceptEnv LANG LC_*",
      "",
    ].join("\n"),
  );
  sshd = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", path.join(dir, "sshd_config")], { stdio: "ignore" });
  await waitForPort(HOST, PORT, 5000);
});

afterAll(() => {
  if (sshd.pid !== undefined) process.kill(sshd.pid, "SIGTERM");
  fs.rmSync(dir, { recursive: true, force: true });
});

test("runs the command text as the session command, pipes stdin, reports the exit code", async () => {
  const exec = openSshExecutor();
  const chunks: string[] = [];
  const r = await exec({
    host: HOST, port: PORT, user: "root", privateKey: clientKey, hostKey: hostPub,
    command: `read x; printf '%s|%s\\n' "$x" "$(id -un)"; echo err >&2; exit 7`,
    stdin: "from-stdin\n",
    onOutput: (s, c) => chunks.push(`${s}:${c}`),
  });
  expect(r.kind).toBe("exited");
  expect(r.exitCode).toBe(7);
  expect(r.stdout).toBe("from-stdin|root\n");
  expect(r.stderr).toBe("err\n");
  expect(chunks.join("")).toContain("stdout:from-stdin|root");
});

test("a wrong pinned host key is a failed dial, never a run", async () => {
  const other = execFileSync("bash", ["-c", `ssh-keygen -q -t ed25519 -N '' -f ${dir}/other >/dev/null && cut -d' ' -f1,2 ${dir}/other.pub`]).toString().trim();
  const marker = path.join(dir, "must-not-exist");
  const r = await openSshExecutor()({ host: HOST, port: PORT, user: "root", privateKey: clientKey, hostKey: other, command: `touch ${marker}` });
  expect(r.kind).toBe("connect");
  expect(r.message).toMatch(/host key/i);
  expect(fs.existsSync(marker)).toBe(false);
});

test("nothing listening is a failed dial", async () => {
  const r = await openSshExecutor({ connectTimeoutSeconds: 2 })({ host: HOST, port: PORT + 1, user: "root", privateKey: clientKey, command: "true" });
  expect(r.kind).toBe("connect");
  expect(r.message).toMatch(/refused/i);
});

test("the runner applies the fixture over real SSH; the second apply opens no session", async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "runner-e2e-"));
  const stackFile = path.join(ws, "Pulumi.e2e.yaml");
  fs.writeFileSync(
    stackFile,
    YAML.stringify({
      config: {
        "kubeadm:nodes": [{ name: "n1", host: HOST, port: PORT, hostKey: hostPub }],
        "kubeadm:sshPrivateKey": clientKey,
        "kubeadm:token": TOKEN,
      },
    }),
  );
  const lines: string[] = [];
  const opts = { stackFile, programPath: FIXTURE, statePath: path.join(ws, "state.json"), labDir: path.join(ws, "lab"), log: (l: string) => lines.push(l) };
  const r1 = await runProgram({ ...opts, mode: "apply" });
  expect(r1.errors).toEqual([]);
  expect(r1.ok).toBe(true);
  const host = os.hostname();
  expect(r1.outputs["firstOut"]).toEqual([`hello from ${host}`]);
  expect(r1.sshSessions).toEqual({ [`${HOST}:${PORT}`]: 2 });
  const state = fs.readFileSync(path.join(ws, "state.json"), "utf8");
  expect(state).not.toContain(TOKEN);
  expect(lines.join("\n")).not.toContain(TOKEN);
  expect(lines).toContain(`fx-n1-first:   | hello from ${host}`);

  const r2 = await runProgram({ ...opts, mode: "apply" });
  expect(r2.ok).toBe(true);
  expect(r2.sshSessions).toEqual({});

  const r3 = await runProgram({ ...opts, mode: "destroy" });
  expect(r3.ok).toBe(true);
  expect(r3.resources.map((r) => r.name)).toEqual(["fx-n1-second", "fx-n1-first"]);
  expect(lines).toContain("fx-n1-first:   | deleting first");
  fs.rmSync(ws, { recursive: true, force: true });
});
