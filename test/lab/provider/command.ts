/**
 * Runs one command of a `command:remote:Command` the way pulumi-command 1.2.1's remote provider does
 * (provider/pkg/provider/remote/commandOutputs.go and connection.go, pulumi/pulumi-command):
 *
 * - one SSH session per command; the command text is the session's command (`session.Run(cmd)`);
 *   stdin is attached only when non-empty;
 * - `connection`: user defaults to `root`, port to 22; a failed dial is retried `dialErrorLimit` times
 *   (default 10, -1 = unlimited), so it is tried limit + 1 times; `hostKey` checked only when set (an
 *   empty one is a parse error, as in the real provider); `proxy` is NOT supported by this stand-in: a
 *   command with one fails instead of silently connecting directly;
 * - `environment`: one SSH setenv per entry; a refused setenv FAILS the command with
 *   `could not set environment variable "K": ssh: setenv failed`. OpenSSH's client does not report
 *   refusals, so this decides as the server would, from `acceptEnv` (default: none, as the lab's
 *   sshd has no AcceptEnv line);
 * - `addPreviousOutputInEnv` (default true): the previous stdout/stderr go as PULUMI_COMMAND_STDOUT /
 *   PULUMI_COMMAND_STDERR through setenv; a refusal only warns;
 * - a non-zero exit becomes `Process exited with status N: running "<cmd>":\n<stdout+stderr>`
 *   (Go's `%w: running %q`), whatever `logging` says: like the real provider, the error quotes the
 *   whole command and its output;
 * - on success stdout and stderr lose ONE trailing newline;
 * - `logging` (default stdoutAndStderr) chooses which streams are logged, line by line, as info
 *   status messages (ephemeral, like the real provider's InfoStatus).
 */
import { ExecResult, Executor, LogFn } from "./types";

/** The `command:remote:Command` inputs this module reads (secrets already revealed). */
export interface CommandProps {
  connection?: Record<string, unknown>;
  environment?: Record<string, string>;
  stdin?: string;
  logging?: string;
  addPreviousOutputInEnv?: boolean;
}

export interface RunCommandOptions {
  command: string;
  props: CommandProps;
  /** The resource's last stdout/stderr (update and delete). */
  previous?: { stdout: string; stderr: string };
  executor: Executor;
  log: LogFn;
  /** Names the SSH servers accept (sshd AcceptEnv); default none (the lab's sshd). */
  acceptEnv?: string[];
  /** Base delay between dial retries; default 500 ms. */
  dialRetryDelayMs?: number;
}

/** A failed command, with pulumi-command's error text. */
export class CommandError extends Error {}

function envAccepted(name: string, patterns: string[]): boolean {
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`).test(name));
}

/** True when `logging` (pulumi-command's enum, default stdoutAndStderr) logs that stream. */
export function shouldLog(logging: string | undefined, stream: "stdout" | "stderr"): boolean {
  const l = logging ?? "stdoutAndStderr";
  return l === "stdoutAndStderr" || l === stream;
}

const SETENV_HINT =
  "This only works if your SSH server is configured to accept these variables via AcceptEnv. Alternatively, if a " +
  "Bash-like shell runs the command on the remote host, you could prefix the command itself with the variables in the form 'VAR=value command'";

/**
 * Runs the command; resolves with its stdout/stderr (one trailing newline trimmed).
 * @throws CommandError with pulumi-command's text on a failed dial, a refused environment variable
 *   or a non-zero exit.
 */
export async function runCommand(o: RunCommandOptions): Promise<{ stdout: string; stderr: string }> {
  const c = o.props.connection ?? {};
  const host = String(c["host"] ?? "");
  const port = typeof c["port"] === "number" ? c["port"] : 22;
  const user = typeof c["user"] === "string" ? c["user"] : "root";
  const limit = typeof c["dialErrorLimit"] === "number" ? c["dialErrorLimit"] : 10;
  const acceptEnv = o.acceptEnv ?? [];
  const hostPort = `${host}:${port}`;
  if (c["proxy"] !== undefined && c["proxy"] !== null) {
    throw new CommandError(`the lab's stand-in command provider does not support connection.proxy (${hostPort})`);
  }
  if (c["hostKey"] === "") throw new CommandError(`ssh: no key found (connection.hostKey is empty)`);

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.props.environment ?? {})) {
    if (!envAccepted(k, acceptEnv)) {
      o.log("error", `Unable to set '${k}'. ${SETENV_HINT}`);
      throw new CommandError(`could not set environment variable "${k}": ssh: setenv failed`);
    }
    env[k] = String(v);
  }
  if (o.props.addPreviousOutputInEnv !== false && o.previous) {
    for (const [k, v] of [["PULUMI_COMMAND_STDOUT", o.previous.stdout], ["PULUMI_COMMAND_STDERR", o.previous.stderr]] as const) {
      if (v === "") continue;
      if (envAccepted(k, acceptEnv)) env[k] = v;
      else o.log("warning", `Unable to set '${k}'. ${SETENV_HINT}`);
    }
  }

  // Output logged line by line as it arrives, per `logging` (both streams into one line buffer).
  let partial = "";
  const onOutput = (stream: "stdout" | "stderr", chunk: string): void => {
    if (!shouldLog(o.props.logging, stream)) return;
    partial += chunk;
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) o.log("status", line);
  };

  let result: ExecResult | undefined;
  for (let dial = 1; ; dial++) {
    result = await o.executor({
      host,
      port,
      user,
      privateKey: typeof c["privateKey"] === "string" ? c["privateKey"] : undefined,
      password: typeof c["password"] === "string" ? c["password"] : undefined,
      hostKey: typeof c["hostKey"] === "string" && c["hostKey"] !== "" ? c["hostKey"] : undefined,
      command: o.command,
      stdin: o.props.stdin,
      env,
      onOutput,
    });
    if (result.kind !== "connect") break;
    if (limit >= 0 && dial > limit) {
      throw new CommandError(`failed to dial ${hostPort} after ${dial} failed attempts: ${result.message ?? "connection failed"}`);
    }
    o.log("debug", `dial ${hostPort} failed (${result.message ?? "connection failed"}), retry ${dial}/${limit < 0 ? "unlimited" : limit}`);
    await new Promise((r) => setTimeout(r, Math.min((o.dialRetryDelayMs ?? 500) * dial, 5000)));
  }
  if (partial !== "") o.log("status", partial);
  if (result.exitCode !== 0) {
    const why =
      result.exitCode === null
        ? "wait: remote command exited without exit status or exit signal"
        : `Process exited with status ${result.exitCode}`;
    throw new CommandError(`${why}: running ${JSON.stringify(o.command)}:\n${result.combined}`);
  }
  return { stdout: result.stdout.replace(/\n$/, ""), stderr: result.stderr.replace(/\n$/, "") };
}
