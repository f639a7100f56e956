/**
 * One timed `apply` of the bench stack: wall time, the runner's result, the timeline (saved as
 * `tmp/bench/<name>.timeline.txt`) and each node's sshd log lines since just before it. Throws when the
 * apply failed, naming the timeline.
 */
import type { RunResult } from "../runner/types";
import { benchRun, nodeNames, LAB_DIR } from "./lab";
import { countSince, logOffsets, type LogCounts } from "./sshdlog";
import { Timeline } from "./timeline";
import { CLUSTER } from "./cluster";

export interface TimedApply {
  result: RunResult;
  wall: number;
  tl: Timeline;
  timeline: string;
  /** Per node, from its sshd.log. */
  sshd: Record<string, LogCounts>;
}

export async function timedApply(stackFile: string, name: string, say: (l: string) => void): Promise<TimedApply> {
  const offsets = logOffsets(LAB_DIR, nodeNames(CLUSTER));
  const tl = new Timeline();
  say(`${name}: apply ...`);
  const t0 = process.hrtime.bigint();
  const result = await benchRun(stackFile, "apply", tl.log);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const timeline = tl.save(name);
  if (!result.ok) {
    const why = [...result.errors, ...result.resources.filter((r) => !r.ok).map((r) => r.error)].join("; ");
    throw new Error(`${name}: apply failed (see ${timeline}): ${why}`);
  }
  return { result, wall, tl, timeline, sshd: countSince(LAB_DIR, offsets) };
}
