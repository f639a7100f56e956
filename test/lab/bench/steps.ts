/**
 * Per-step figures of a run, from the runner's result and the timeline: how long each kind of step
 * took (mean/max, seconds) and when the critical milestones happened, to see where wall time goes
 * beyond the stand-in's kubeadm durations.
 */
import type { RunResult } from "../runner/types";
import { round } from "./bounds";
import type { Timeline } from "./timeline";
import { criticalPath, pathSummary, type Link } from "./critical";

export interface StepKind {
  count: number;
  mean_s: number;
  max_s: number;
  sessions: number;
}

export interface StepFigures {
  /** Per step kind (the resource name's suffix after the node name). */
  kinds: Record<string, StepKind>;
  /** Seconds since the run started: first command started, init started/ended, last step ended. */
  milestones: Record<string, number>;
  /** The chain of steps that decided the wall time, with each one's time and the gap before it. */
  critical_path: Link[];
  /** Seconds on the critical path per step kind, plus `gaps`. */
  critical_path_by_kind: Record<string, number>;
}

/** `bench-worker-3-join-token` -> `join-token` (bench node names are `cp-N` and `worker-N`). */
export function kindOf(resource: string): string {
  const m = /^[^-]+-(?:cp|worker)-\d+-(.+)$/.exec(resource);
  return m?.[1] ?? resource;
}

/** `deps`: resource name -> its recorded dependencies (stateDependencies). */
export function stepFigures(result: RunResult, tl: Timeline, deps: Record<string, string[]> = {}): StepFigures {
  const kinds: Record<string, { n: number; sum: number; max: number; sessions: number }> = {};
  for (const r of result.resources) {
    if (r.ran.length === 0) continue;
    const k = kindOf(r.name);
    const e = (kinds[k] ??= { n: 0, sum: 0, max: 0, sessions: 0 });
    e.n++;
    e.sum += r.durationMs / 1000;
    e.max = Math.max(e.max, r.durationMs / 1000);
    e.sessions += r.sshSessions;
  }
  const spans = tl.spans();
  const milestones: Record<string, number> = {};
  const all = [...spans.entries()];
  if (all.length > 0) {
    milestones.first_command_start = round(Math.min(...all.map(([, s]) => s.start)));
    milestones.last_command_end = round(Math.max(...all.map(([, s]) => s.end ?? s.start)));
  }
  for (const [name, s] of all) {
    const k = kindOf(name);
    if (k === "init") {
      milestones.init_start = round(s.start);
      if (s.end !== undefined) milestones.init_end = round(s.end);
    }
    if (k === "join") {
      if (s.end !== undefined) milestones.last_join_end = Math.max(milestones.last_join_end ?? 0, round(s.end));
      milestones.first_join_start = Math.min(milestones.first_join_start ?? Infinity, round(s.start));
    }
  }
  const path = criticalPath(deps, spans);
  return {
    critical_path: path,
    critical_path_by_kind: pathSummary(path, kindOf),
    kinds: Object.fromEntries(Object.entries(kinds).map(([k, e]) => [k, { count: e.n, mean_s: round(e.sum / e.n), max_s: round(e.max), sessions: e.sessions }])),
    milestones,
  };
}
