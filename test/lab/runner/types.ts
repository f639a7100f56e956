/**
 * Shared shapes of the lab runner: what a run returns, and the pluggable SSH executor.
 * No I/O here.
 */

export type Mode = "preview" | "apply" | "destroy";

/** What happened (or, in preview, would happen) to one resource. */
export type Op = "create" | "update" | "replace" | "delete" | "same";

export interface ResourceResult {
  /** Logical resource name, e.g. `lab-cp1-init`. */
  name: string;
  /** Pulumi type token, e.g. `command:remote:Command`. */
  type: string;
  op: Op;
  /** False when a command failed, or when it was not run because an earlier step failed. */
  ok: boolean;
  /** Error text, with secret values masked. */
  error?: string;
  /** True when the step was not run because an earlier step failed (engine stops on first error). */
  skipped?: boolean;
  /** Wall-clock milliseconds spent on this resource's commands (0 for same/preview). */
  durationMs: number;
  /** SSH sessions opened for this resource (dial retries included). */
  sshSessions: number;
  /** Remote commands actually run for this resource, in order: `create`, `update`, `delete`, `delete(old)`. */
  ran: string[];
}

export interface RunResult {
  mode: Mode;
  stack: string;
  ok: boolean;
  /** Per resource, in the order they were decided (registration order, then deletes). */
  resources: ResourceResult[];
  /** The program's stack outputs; secret outputs replaced by `[secret]`. */
  outputs: Record<string, unknown>;
  /** SSH sessions opened per `host:port`. */
  sshSessions: Record<string, number>;
  /** Errors not tied to one resource (program threw, stack file refused...), masked. */
  errors: string[];
  durationMs: number;
}

/** One remote command, as pulumi-command would run it over one SSH session. */
export interface ExecRequest {
  host: string;
  port: number;
  user: string;
  privateKey?: string;
  password?: string;
  /** `ssh-ed25519 AAAA...`: when set the server's host key must match; unset = not checked. */
  hostKey?: string;
  /** The command text, passed to the server as the session's command (session.Run(cmd)). */
  command: string;
  /** Written to the session's stdin when non-empty (pulumi-command skips an empty stdin). */
  stdin?: string;
  /** Environment sent with SSH setenv requests (sshd's AcceptEnv decides). */
  env?: Record<string, string>;
  /** Per-chunk output as it arrives (the runner decides what it may print). */
  onOutput?: (stream: "stdout" | "stderr", chunk: string) => void;
}

export interface ExecResult {
  /**
   * `exited`: the remote command ran and exited (code may be non-zero);
   * `connect`: no session could be opened (dial/auth/host key); the text is in `message`.
   */
  kind: "exited" | "connect";
  exitCode: number | null;
  signal?: string | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved in arrival order (pulumi-command's error text quotes this). */
  combined: string;
  message?: string;
}

/** Runs one remote command. The real one is {@link ../ssh.ts openSshExecutor}; unit tests pass a fake. */
export type Executor = (req: ExecRequest) => Promise<ExecResult>;

/** Where progress lines go. Every line passed here has already been masked. */
export type LogFn = (line: string) => void;
