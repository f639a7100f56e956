/**
 * Runs one command of a `command:remote:Command` the way pulumi-command's remote provider does
 * (provider/pkg/provider/remote/commandOutputs.go and connection.go, pulumi/pulumi-command):
 *
 * - one SSH session per command; the command text is the session's command (`session.Run(cmd)`);
 *   stdin is attached only when non-empty;
 * - `connection`: user defaults to `root`, port to 22; dialling is retried up to `dialErrorLimit`
 *   (default 10, -1 = unlimited) times; `hostKey` checked only when set;
 * - `environment`: one SSH setenv per entry; a refused setenv FAILS the command with
 *   `could not set environment variable "K": ssh: setenv failed`. OpenSSH's client does not report
 *   refusals, so the runner decides as the server would, from `acceptEnv` (default: Debian sshd's
 *   `AcceptEnv LANG LC_*`);
 * - `addPreviousOutputInEnv` (default true): on update/delete the previous stdout/stderr go as
 *   PULUMI_COMMAND_STDOUT / PULUMI_COMMAND_STDERR through setenv; a refusal only warns;
 * - a non-zero exit becomes `Process exited with status N: running "<cmd>":\n<stdout+stderr>`
 *   (Go's %w: running %q); on success stdout and stderr lose ONE trailing newline;
 * - `logging` (default stdoutAndStderr) chooses which streams are logged while running; the runner
 *   additionally never prints any output of a `logging: "none"` command, not even in an error
 *   (pulumi-command quotes the output in the error text regardless; we deliberately do not).
 */
import { ExecResult, Executor, LogFn } from "./types";
import { Masker } from "./secrets";

export interface CommandProps {
  connection?: Record<string, unknown>;
  environment?: Record<string, string>;
  stdin?: string;
  logging?: string;
  addPreviousOutputInEnv?: boolean;
}

export interface RunCommandOptions {
  /** Resource name, the prefix of every printed line. */
  name: string;
  /** What runs: `create`, `update`, `delete`, `delete(old)`: for printing only. */
  label: string;
  command: string;
  props: CommandProps;
  previous?: { stdout: string; stderr: string };
  executor: Executor;
  log: LogFn;
  masker: Masker;
  acceptEnv: string[];
  dialRetryDelayMs: number;
  /** Called once per SSH session opened, with `host:port`. */
  onSession: (hostPort: string) => void;
}

export class CommandError extends Error {}

function envAccepted(name: string, patterns: string[]): boolean {
  return patterns.some((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`).test(name));
}

export function shouldLog(logging: string | undefined, stream: "stdout" | "stderr"): boolean {
  const l = logging ?? "stdoutAndStderr";
  return l === "stdoutAndStderr" || l === stream;
}

/** Runs the command; resolves with its stdout/stderr (one trailing newline trimmed) or throws a masked CommandError. */
export async function runCommand(o: RunCommandOptions): Promise<{ stdout: string; stderr: string }> {
  const c = o.props.connection ?? {};
  const host = String(c["host"] ?? "");
  const port = typeof c["port"] === "number" ? c["port"] : 22;
  const user = typeof c["user"] === "string" ? c["user"] : "root";
  const limit = typeof c["dialErrorLimit"] === "number" ? c["dialErrorLimit"] : 10;
  const hostPort = `${host}:${port}`;
  const hidden = o.props.logging === "none";
  const say = (s: string): void => o.log(o.masker.mask(`${o.name}: ${s}`));

  // Environment: the server refuses names outside AcceptEnv, and pulumi-command fails on that.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.props.environment ?? {})) {
    if (!envAccepted(k, o.acceptEnv)) {
      o.onSession(hostPort);
      throw new CommandError(`could not set environment variable "${k}": ssh: setenv failed`);
    }
    env[k] = String(v);
  }
  if (o.props.addPreviousOutputInEnv !== false && o.previous) {
    for (const [k, v] of [["PULUMI_COMMAND_STDOUT", o.previous.stdout], ["PULUMI_COMMAND_STDERR", o.previous.stderr]] as const) {
      if (v === "") continue;
      if (envAccepted(k, o.acceptEnv)) env[k] = v;
      else say(`warning: Unable to set '${k}': the SSH server does not accept it (AcceptEnv); set addPreviousOutputInEnv: false`);
    }
  }

  // Output printed line by line as it arrives, per `logging`.
  const partial: Record<"stdout" | "stderr", string> = { stdout: "", stderr: "" };
  const onOutput = (stream: "stdout" | "stderr", chunk: string): void => {
    if (hidden || !shouldLog(o.props.logging, stream)) return;
    partial[stream] += chunk;
    const lines = partial[stream].split("\n");
    partial[stream] = lines.pop() ?? "";
    for (const line of lines) say(`  | ${line}`);
  };
  const flush = (): void => {
    for (const s of ["stdout", "stderr"] as const) {
      if (partial[s] !== "") say(`  | ${partial[s]}`);
      partial[s] = "";
    }
  };

  let result: ExecResult | undefined;
  for (let dial = 1; ; dial++) {
    o.onSession(hostPort);
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
    if (limit >= 0 && dial >= limit) {
      flush();
      throw new CommandError(`dial ${hostPort} failed ${dial} time(s): ${result.message ?? "connection failed"}`);
    }
    say(`dial ${hostPort} failed (${result.message ?? "connection failed"}), retry ${dial}/${limit < 0 ? "∞" : limit}`);
    await new Promise((r) => setTimeout(r, Math.min(o.dialRetryDelayMs * dial, 5000)));
  }
  flush();
  if (result.exitCode !== 0) {
    const why =
      result.exitCode === null || (result.exitCode === 255 && result.signal)
        ? "wait: remote command exited without exit status or exit signal"
        : `Process exited with status ${result.exitCode}`;
    const output = hidden ? "[output not shown: logging is \"none\"]" : result.combined;
    throw new CommandError(`${why}: running ${JSON.stringify(o.command)}:\n${output}`);
  }
  return { stdout: result.stdout.replace(/\n$/, ""), stderr: result.stderr.replace(/\n$/, "") };
}
