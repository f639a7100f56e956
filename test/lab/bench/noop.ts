/**
 * Scenario `noop`: a second apply of the provisioned stack with nothing changed. Sessions are counted
 * twice: by the runner (one per `ssh` process it starts) and from the nodes' sshd logs.
 */
import { benchRun, totalSessions, LAB_DIR, nodeNames } from "./lab";
import { round } from "./bounds";
import { countSince, logOffsets } from "./sshdlog";
import { Timeline } from "./timeline";
import { CLUSTER } from "./provision";

export interface NoopFigures {
  wall_s: number;
  /** From the nodes' sshd logs (Accepted publickey lines), all nodes. */
  ssh_sessions: number;
  runner_ssh_sessions: number;
  commands_run: number;
}

export async function runNoop(stackFile: string, say: (l: string) => void): Promise<NoopFigures> {
  const offsets = logOffsets(LAB_DIR, nodeNames(CLUSTER));
  const tl = new Timeline();
  say("noop: second apply, nothing changed ...");
  const t0 = process.hrtime.bigint();
  const result = await benchRun(stackFile, "apply", tl.log);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const timeline = tl.save("noop");
  if (!result.ok) throw new Error(`noop apply failed (see ${timeline}): ${result.errors.join("; ")}`);
  const counts = countSince(LAB_DIR, offsets);
  return {
    wall_s: round(wall),
    ssh_sessions: Object.values(counts).reduce((a, c) => a + c.accepted, 0),
    runner_ssh_sessions: totalSessions(result),
    commands_run: result.resources.filter((r) => r.ran.length > 0).length,
  };
}
