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
 */
import { spawn } from "child_process";
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
  return async (req: ExecRequest): Promise<ExecResult> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-ssh-"));
    try {
      const args = ["-T", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", `ConnectTimeout=${options.connectTimeoutSeconds ?? 10}`];
      args.push("-o", "LogLevel=ERROR", "-E", path.join(dir, "client.log"));
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
