/**
 * SSH sessions counted from the nodes' own sshd logs (`LogLevel VERBOSE`), not from the runner: the
 * log is read from a byte offset taken before the run, so sessions the lab itself opened earlier do
 * not count.
 */
import * as fs from "fs";
import { nodePaths } from "./paths";

/** One line per accepted connection (publickey auth): what the benchmark counts. */
export const ACCEPTED = /Accepted publickey for /;
/** One line per session channel that ran a command (`Starting session: command for root ...`). */
export const STARTING = /Starting session: /;

export interface LogCounts {
  accepted: number;
  starting: number;
}

export function countLines(text: string): LogCounts {
  let accepted = 0;
  let starting = 0;
  for (const line of text.split("\n")) {
    if (ACCEPTED.test(line)) accepted++;
    if (STARTING.test(line)) starting++;
  }
  return { accepted, starting };
}

function logFile(labDir: string, node: string): string {
  return nodePaths(labDir, node).sshdLog;
}

/** Byte offset of each node's sshd.log now. */
export function logOffsets(labDir: string, nodes: string[]): Record<string, number> {
  return Object.fromEntries(nodes.map((n) => {
    const f = logFile(labDir, n);
    return [n, fs.existsSync(f) ? fs.statSync(f).size : 0];
  }));
}

/** Per node, what its sshd logged since `offsets`. */
export function countSince(labDir: string, offsets: Record<string, number>): Record<string, LogCounts> {
  const out: Record<string, LogCounts> = {};
  for (const [node, from] of Object.entries(offsets)) {
    const f = logFile(labDir, node);
    if (!fs.existsSync(f)) {
      out[node] = { accepted: 0, starting: 0 };
      continue;
    }
    const buf = fs.readFileSync(f);
    out[node] = countLines(buf.subarray(from).toString("utf8"));
  }
  return out;
}
