/**
 * Scenario `noop`: a second apply of the provisioned stack with nothing changed. Sessions are counted
 * twice: by the runner (one per `ssh` process it starts) and from the nodes' sshd logs.
 */
import { totalSessions } from "./lab";
import { round } from "./bounds";
import { timedApply } from "./apply";

export interface NoopFigures {
  wall_s: number;
  /** From the nodes' sshd logs (Accepted publickey lines), all nodes. */
  ssh_sessions: number;
  runner_ssh_sessions: number;
  commands_run: number;
}

export async function runNoop(stackFile: string, say: (l: string) => void): Promise<NoopFigures> {
  const { result, wall, sshd } = await timedApply(stackFile, "noop", say);
  return {
    wall_s: round(wall),
    ssh_sessions: Object.values(sshd).reduce((a, c) => a + c.accepted, 0),
    runner_ssh_sessions: totalSessions(result),
    commands_run: result.resources.filter((r) => r.ran.length > 0).length,
  };
}
