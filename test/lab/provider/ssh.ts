/**
 * The real executor: one OpenSSH `ssh` client process per remote command, as pulumi-command opens one
 * SSH session per command (session.Run(cmd), stdin piped when non-empty).
 *
 * - `-T`, `BatchMode=yes`, `-F /dev/null` (no user config), `IdentitiesOnly=yes`, the private key written
 *   to a 0600 temp file removed afterwards.
 * - host key: when `hostKey` is set, a temp known_hosts with that one key and `StrictHostKeyChecking=yes`;
 *   unset: `StrictHostKeyChecking=no`, `UserKnownHostsFile=/dev/null` (pulumi-command does not check then).
 * - The client's own diagnostics go to a temp log (`-E`), so a failure to connect (exit 255 with a
 *   logged error) is told apart from the remote command's stderr.
 * - `env` goes through `SetEnv` (SSH setenv requests), which sshd only honours for names in AcceptEnv.
 * - The destination comes after `--`: a hostile host (`-oProxyCommand=...`) is a host name, never an option.
 * - The key exchanges and ciphers pulumi-command's SSH client offers, in its order (`-o KexAlgorithms`,
 *   `-o Ciphers`; {@link goSshAlgorithms}), not OpenSSH's own defaults: pulumi-command dials with Go's
 *   golang.org/x/crypto/ssh and its default algorithms, which do not include OpenSSH's first choice,
 *   sntrup761x25519-sha512, so against an OpenSSH 9.2 server (the lab's, Debian 12's) it agrees on
 *   curve25519-sha256. sntrup761 costs about 0.1 s of CPU per connection here (a bare `ssh true`: 0.24 s
 *   against 0.13 s), which the stand-in would otherwise add to every command and the real plugin does not.
 */
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ExecRequest, ExecResult, Executor } from "./types";

export interface OpenSshOptions {
  /** The `ssh` binary; default `ssh` on PATH. */
  sshPath?: string;
  /** Seconds for the TCP connect (`ConnectTimeout`); default 10. */
  connectTimeoutSeconds?: number;
}

/**
 * Go's golang.org/x/crypto/ssh client defaults (ssh/common.go: `defaultKexAlgos` with the
 * curve25519-sha256@libssh.org alias it adds, `defaultCiphers`), in its order of preference: those of
 * x/crypto v0.48.0, which pulumi-command 1.2.1 requires (the same lists as v0.47.0). Older releases
 * (v0.24, under pulumi-command 1.0) list the same ones without mlkem768x25519-sha256; none has
 * sntrup761x25519-sha512. pulumi-command dials with a bare `ssh.ClientConfig`, so these defaults apply.
 */
export const GO_SSH_CLIENT = {
  kex: [
    "mlkem768x25519-sha256",
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group14-sha256",
    "diffie-hellman-group14-sha1",
  ],
  ciphers: ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr"],
};

/**
 * The `ssh` options that make OpenSSH's client offer what Go's does ({@link GO_SSH_CLIENT}), keeping only
 * the names this client knows (`ssh -Q kex`, `ssh -Q cipher`: OpenSSH before 9.9 has no
 * mlkem768x25519-sha256 and refuses an unknown name).
 * @throws Error when `ssh -Q` fails or the client knows none of them.
 */
export function goSshAlgorithms(sshPath = "ssh"): string[] {
  const known = (query: string) => new Set(execFileSync(sshPath, ["-Q", query], { encoding: "utf8" }).split("\n").map((l) => l.trim()));
  const pick = (query: string, wanted: string[]) => {
    const k = known(query);
    const kept = wanted.filter((w) => k.has(w));
    if (kept.length === 0) throw new Error(`${sshPath} knows none of Go's ssh ${query} algorithms (${wanted.join(", ")})`);
    return kept.join(",");
  };
  return ["-o", `KexAlgorithms=${pick("kex", GO_SSH_CLIENT.kex)}`, "-o", `Ciphers=${pick("cipher", GO_SSH_CLIENT.ciphers)}`];
}

function knownHostsLine(host: string, port: number, hostKey: string): string {
  const pattern = port === 22 ? host : `[${host}]:${port}`;
  return `${pattern} ${hostKey.trim()}\n`;
}

/**
 * An {@link Executor} that runs each request with the OpenSSH client (see the module comment).
 * Never throws for a failed connection or command: a failed dial is `kind: "connect"`, anything
 * else `kind: "exited"` with the exit code.
 */
export function openSshExecutor(options: OpenSshOptions = {}): Executor {
  const sshPath = options.sshPath ?? "ssh";
  let algorithms: string[] | undefined;
  return async (req: ExecRequest): Promise<ExecResult> => {
    if (algorithms === undefined) {
      try {
        algorithms = goSshAlgorithms(sshPath);
      } catch (err) {
        return { kind: "connect", exitCode: null, stdout: "", stderr: "", combined: "", message: `cannot run ${sshPath} -Q: ${(err as Error).message}` };
      }
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-ssh-"));
    try {
      const args = ["-T", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", `ConnectTimeout=${options.connectTimeoutSeconds ?? 10}`];
      args.push("-o", "LogLevel=ERROR", "-E", path.join(dir, "client.log"), ...algorithms);
      args.push("-p", String(req.port), "-l", req.user);
      if (req.privateKey !== undefined) {
        const keyFile = path.join(dir, "id");
        const key = req.privateKey.endsWith("\n") ? req.privateKey : req.privateKey + "\n";
        fs.writeFileSync(keyFile, key, { mode: 0o600 });
        args.push("-i", keyFile, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none");
      }
      if (req.hostKey !== undefined && req.hostKey.trim() !== "") {
        const kh = path.join(dir, "known_hosts");
        fs.writeFileSync(kh, knownHostsLine(req.host, req.port, req.hostKey), { mode: 0o600 });
        args.push("-o", "StrictHostKeyChecking=yes", "-o", `UserKnownHostsFile=${kh}`, "-o", "GlobalKnownHostsFile=/dev/null");
      } else {
        args.push("-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "GlobalKnownHostsFile=/dev/null");
      }
      for (const [k, v] of Object.entries(req.env ?? {})) args.push("-o", `SetEnv=${k}=${v}`);
      // `--`, the destination, then the command as ONE argument: ssh sends it unchanged as the exec
      // request. `--` ends option parsing for good (OpenSSH otherwise parses options again after the
      // destination), so neither a host like `-oProxyCommand=...` nor a command starting with `-`
      // is ever read as an option.
      args.push("--", req.host, req.command);

      const result = await new Promise<ExecResult>((resolve) => {
        const child = spawn(sshPath, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, SSH_AUTH_SOCK: "" } });
        let stdout = "";
        let stderr = "";
        let combined = "";
        child.stdout.setEncoding("utf8");
        child.stderr.setEncoding("utf8");
        child.stdout.on("data", (c: string) => {
          stdout += c;
          combined += c;
          req.onOutput?.("stdout", c);
        });
        child.stderr.on("data", (c: string) => {
          stderr += c;
          combined += c;
          req.onOutput?.("stderr", c);
        });
        child.stdin.on("error", () => undefined); // the remote may exit before reading stdin
        if (req.stdin !== undefined && req.stdin.length > 0) child.stdin.end(req.stdin);
        else child.stdin.end();
        child.on("error", (err) =>
          resolve({ kind: "connect", exitCode: null, stdout, stderr, combined, message: `cannot run ${sshPath}: ${err.message}` }),
        );
        child.on("close", (code, signal) => {
          let log = "";
          try {
            log = fs.readFileSync(path.join(dir, "client.log"), "utf8").trim();
          } catch {
            log = "";
          }
          // Exit 255 with a client error logged before any session (refused, timeout, auth, host key)
          // is a failed dial; a connection lost mid-command is the command's failure, never retried.
          // A server that closes during the handshake (kex_exchange_identification) is a failed dial too.
          const lostSession = /closed by remote host|Broken pipe|Connection reset by peer/i.test(log) && !/kex_exchange_identification|banner exchange/i.test(log);
          if (code === 255 && log !== "" && !lostSession) {
            resolve({ kind: "connect", exitCode: code, signal, stdout, stderr, combined, message: log });
          } else if (code === 255 && lostSession) {
            // The session was lost mid-command: no exit status, as Go's ssh reports it.
            resolve({ kind: "exited", exitCode: null, signal, stdout, stderr, combined });
          } else {
            resolve({ kind: "exited", exitCode: code, signal, stdout, stderr, combined });
          }
        });
      });
      return result;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}
