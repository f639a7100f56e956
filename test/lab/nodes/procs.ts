/** Linux process helpers over /proc: identity (pid + start time), trees, namespaces, termination. */
import * as fs from "node:fs";

export interface ProcStat {
  pid: number;
  ppid: number;
  /** the session id: the pid of the session's leader */
  sid: number;
  /** the command name (`comm`, at most 15 characters) */
  comm: string;
  state: string;
  /** clock ticks since boot: with the pid, identifies one process across pid reuse */
  startTime: number;
}

export function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // comm is in parentheses and may hold spaces or parentheses: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = rest[0] ?? "?";
  const comm = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
  return { pid, state, ppid: Number(rest[1]), sid: Number(rest[3]), comm, startTime: Number(rest[19]) };
}

/** Alive and not a zombie; with startTime, also the same process as recorded. */
export function isAlive(pid: number, startTime?: number): boolean {
  const st = procStat(pid);
  if (!st || st.state === "Z" || st.state === "X") return false;
  return startTime === undefined || st.startTime === startTime;
}

export function allPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** `mnt:[4026532…]`, or undefined when the process is gone. */
export function mountNamespace(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** All live descendants of the given pids (not the pids themselves). */
export function descendants(roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const st = procStat(pid);
    if (!st || st.state === "Z") continue;
    const list = children.get(st.ppid) ?? [];
    list.push(pid);
    children.set(st.ppid, list);
  }
  const out: number[] = [];
  const queue = [...roots];
  while (queue.length > 0) {
    const p = queue.shift() as number;
    for (const c of children.get(p) ?? []) {
      if (!out.includes(c)) {
        out.push(c);
        queue.push(c);
      }
    }
  }
  return out;
}

/** Live processes whose mount namespace is `ns` (never this process nor pid 1). */
export function processesInNamespace(ns: string): number[] {
  return allPids().filter((p) => p !== process.pid && p !== 1 && isAlive(p) && mountNamespace(p) === ns);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, wait up to graceMs, then SIGKILL and wait until all are gone. Returns the pids signalled. */
export async function terminate(pids: number[], graceMs = 1500, signal: NodeJS.Signals = "SIGTERM"): Promise<number[]> {
  const targets = [...new Set(pids)].filter((p) => p > 1 && p !== process.pid && isAlive(p));
  for (const p of targets) {
    try {
      process.kill(p, signal);
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + graceMs;
  while (targets.some((p) => isAlive(p)) && Date.now() < deadline) await sleep(20);
  const stubborn = targets.filter((p) => isAlive(p));
  for (const p of stubborn) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  const hard = Date.now() + 5000;
  while (stubborn.some((p) => isAlive(p))) {
    if (Date.now() > hard) throw new Error(`processes survived SIGKILL: ${stubborn.filter((p) => isAlive(p)).join(" ")}`);
    await sleep(20);
  }
  return targets;
}
