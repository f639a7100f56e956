/**
 * The critical path of a run: from the step that ended last, walk back through the dependency (as the
 * runner recorded it in the state file) that ended latest, to a step with none. Each link shows the
 * step's own time and the gap before it (time between its last dependency ending and it starting:
 * engine/registration latency). Pure, plus a reader of the state file's dependencies.
 */
import { existsSync, readFileSync } from "fs";
import { round } from "./bounds";

export interface Span {
  start: number;
  end?: number;
}

export interface Link {
  step: string;
  start_s: number;
  took_s: number;
  /** Seconds between the dependency it waited for ending and this step starting. */
  gap_s: number;
}

export function criticalPath(deps: Record<string, string[]>, spans: Map<string, Span>): Link[] {
  const ended = [...spans.entries()].filter(([, s]) => s.end !== undefined) as Array<[string, Required<Span>]>;
  if (ended.length === 0) return [];
  let [name, span] = ended.reduce((a, b) => (b[1].end > a[1].end ? b : a));
  const path: Link[] = [];
  for (;;) {
    const before = (deps[name] ?? [])
      .map((d) => [d, spans.get(d)] as const)
      .filter((x): x is readonly [string, Required<Span>] => x[1]?.end !== undefined && x[1].end <= span.start + 0.05);
    const prev = before.length > 0 ? before.reduce((a, b) => (b[1].end > a[1].end ? b : a)) : undefined;
    path.unshift({ step: name, start_s: round(span.start), took_s: round(span.end - span.start), gap_s: round(prev ? span.start - prev[1].end : span.start) });
    if (!prev) break;
    [name, span] = [prev[0], prev[1]];
  }
  return path;
}

/** Resource name -> recorded dependencies, from a runner state file. */
export function stateDependencies(statePath: string): Record<string, string[]> {
  if (!existsSync(statePath)) return {};
  const state = JSON.parse(readFileSync(statePath, "utf8")) as { resources: Record<string, { dependencies?: string[] }> };
  return Object.fromEntries(Object.entries(state.resources).map(([k, v]) => [k, v.dependencies ?? []]));
}

/** Time on the path by step kind, and the total of the gaps. */
export function pathSummary(path: Link[], kindOf: (step: string) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of path) {
    const k = kindOf(l.step);
    out[k] = round((out[k] ?? 0) + l.took_s);
    out.gaps = round((out.gaps ?? 0) + l.gap_s);
  }
  return out;
}
