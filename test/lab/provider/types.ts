/**
 * Shapes of the stand-in command provider's SSH layer: one remote command as pulumi-command runs it
 * over one SSH session, and the pluggable executor that runs it. No I/O here.
 */

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
  /** Per-chunk output as it arrives. */
  onOutput?: (stream: "stdout" | "stderr", chunk: string) => void;
}

export interface ExecResult {
  /**
   * `exited`: the remote command ran and exited (code may be non-zero; null when the connection was
   *   lost before it reported an exit status);
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

/** Runs one remote command. The real one is {@link ./ssh.ts openSshExecutor}; unit tests pass a fake. */
export type Executor = (req: ExecRequest) => Promise<ExecResult>;

/** Engine log severities, as pulumi-command logs through the engine; `status` is info sent ephemeral (InfoStatus). */
export type Severity = "debug" | "info" | "status" | "warning" | "error";

/** Where a command's log lines go (the engine's Log, attached to the resource). */
export type LogFn = (severity: Severity, message: string) => void;
