/**
 * What the engine's own step records say about a run: per step kind (`init`, `join`, `upgrade`, ...)
 * how many ran and how long each took, and how long `pulumi up` spent before its first command and
 * after its last. Engine timestamps are whole seconds, so single steps are +-1 s; means over many
 * steps are what to read.
 */
import type { StepRecord } from "../engine/run";
import { round } from "./stats";

const COMMAND = "command:remote:Command";

/** `bench-worker-12-join-token` -> `join-token`; a join wave's `bench-workers_2-node-metadata` -> `wave node-metadata`. */
export function kindOf(name: string): string {
  const m = /^[^-]+-(?:cp|worker)-\d+-(.+)$/.exec(name);
  if (m) return m[1] as string;
  const w = /^[^-]+-workers_\d+-(.+)$/.exec(name);
  return w ? `wave ${w[1] as string}` : name;
}

/** One step kind over the runs given. */
export interface KindFigures {
  /** Steps of this kind per run. */
  count: number;
  /** Mean seconds a step of this kind took (engine timestamps). */
  mean_s: number;
  max_s: number;
}

/** A run's engine steps and where it started and ended. */
export interface TimedSteps {
  steps: StepRecord[];
  started_epoch_s: number;
  wall_s: number;
}

/** Per step kind, over several runs of the same scenario. */
export function stepKinds(runs: TimedSteps[]): Record<string, KindFigures> {
  const by = new Map<string, number[]>();
  for (const r of runs) {
    for (const s of r.steps) {
      if (s.type !== COMMAND || s.done !== true || s.endedAt === undefined) continue;
      const k = kindOf(s.name);
      by.set(k, [...(by.get(k) ?? []), s.endedAt - s.startedAt]);
    }
  }
  const n = Math.max(1, runs.length);
  return Object.fromEntries(
    [...by.entries()].map(([k, xs]) => [k, { count: round(xs.length / n, 1), mean_s: round(xs.reduce((a, b) => a + b, 0) / xs.length), max_s: Math.max(...xs) }]),
  );
}

/**
 * The run's commands in the order they started: `<start>s +<took>s <name>`, seconds from the `pulumi up`
 * call: to a tenth of a second from when this process received the engine's events (`seenAt`, up to
 * about 0.2 s late: the Automation API polls the engine's event log), else in whole seconds from the
 * engine's timestamps (+-1 s). Enough to read the critical path by eye.
 */
export function timeline(r: TimedSteps): string[] {
  const seen = (s: StepRecord) => s.seenAt !== undefined && s.seenEndAt !== undefined;
  return r.steps
    .filter((s) => s.type === COMMAND && s.endedAt !== undefined)
    .sort((a, b) => (seen(a) && seen(b) ? (a.seenAt as number) - (b.seenAt as number) : a.startedAt - b.startedAt))
    .map((s) =>
      seen(s)
        ? `${((s.seenAt as number) - r.started_epoch_s).toFixed(1)}s +${((s.seenEndAt as number) - (s.seenAt as number)).toFixed(1)}s ${s.name}`
        : `${round(s.startedAt - r.started_epoch_s, 0)}s +${(s.endedAt as number) - s.startedAt}s ${s.name}`,
    );
}

/** Seconds from the `pulumi up` call to its first command, and from its last command to its end (+-1 s). */
export function startAndTail(r: TimedSteps): { before_first_command_s: number; after_last_command_s: number } | undefined {
  const cmds = r.steps.filter((s) => s.type === COMMAND && s.endedAt !== undefined);
  if (cmds.length === 0) return undefined;
  const first = Math.min(...cmds.map((s) => s.startedAt));
  const last = Math.max(...cmds.map((s) => s.endedAt as number));
  return {
    before_first_command_s: round(Math.max(0, first - r.started_epoch_s), 1),
    after_last_command_s: round(Math.max(0, r.started_epoch_s + r.wall_s - last), 1),
  };
}
