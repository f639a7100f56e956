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
import { GO_SSH_CLIENT, goSshAlgorithms, openSshExecutor } from "../../lab/provider/ssh";

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
      // The key exchange each connection agreed on ("kex: algorithm: ..."), in sshd.log.
      "LogLevel DEBUG1",
      "",
    ].join("\n"),
  );
  sshd = spawn("/usr/sbin/sshd", ["-D", "-E", path.join(dir, "sshd.log"), "-f", path.join(dir, "sshd_config")], { stdio: "ignore" });
  // A guard against an sshd that never listens, not a speed check (below Jest's 60 s for a hook).
  await waitForPort(HOST, PORT, 50000);
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

test("offers the key exchanges and ciphers of pulumi-command's Go SSH client, so an OpenSSH 9.2 server agrees on curve25519-sha256 and aes128-gcm, not on its own first choices sntrup761x25519 and chacha20-poly1305", async () => {
  const log = path.join(dir, "sshd.log");
  const before = fs.readFileSync(log, "utf8").length;
  const r = await openSshExecutor()({ host: HOST, port: PORT, user: "root", privateKey: clientKey, hostKey: hostPub, command: "true" });
  expect(r.kind).toBe("exited");
  expect(r.exitCode).toBe(0);
  const said = fs.readFileSync(log, "utf8").slice(before);
  const agreed = {
    kex: [...said.matchAll(/kex: algorithm: (\S+)/g)].map((m) => m[1]),
    cipher: [...said.matchAll(/kex: client->server cipher: (\S+)/g)].map((m) => m[1]),
  };
  // Go's first choices this OpenSSH knows (before 9.9, which adds mlkem768x25519-sha256 to both).
  const goFirst = goSshAlgorithms()[1]?.replace(/^KexAlgorithms=/, "").split(",")[0];
  expect(agreed).toEqual({ kex: [goFirst], cipher: [GO_SSH_CLIENT.ciphers[0]] });
  expect(["curve25519-sha256", "mlkem768x25519-sha256"]).toContain(goFirst);
});
