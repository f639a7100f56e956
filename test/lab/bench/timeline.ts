/**
 * A run's progress lines with the time each arrived (seconds since the run started), kept as evidence
 * (`tmp/bench/<scenario>.timeline.txt`) and read back for per-step figures.
 */
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";
import { REPO_ROOT } from "../nodes";

/** Where timelines and results are kept (git-ignored `tmp/`); the lab folder is removed at the end. */
export const RESULTS_DIR = join(REPO_ROOT, "tmp", "bench");

export class Timeline {
  readonly lines: Array<{ t: number; line: string }> = [];
  private readonly t0 = Date.now();
  readonly log = (line: string): void => {
    this.lines.push({ t: (Date.now() - this.t0) / 1000, line });
  };
  save(name: string): string {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `${name}.timeline.txt`);
    writeFileSync(file, this.lines.map((l) => `${l.t.toFixed(2).padStart(7)} ${l.line}`).join("\n") + "\n");
    return file;
  }
  /** When `<resource>: <label> ...` started and `... done` ended, per resource. */
  spans(): Map<string, { start: number; end?: number }> {
    const out = new Map<string, { start: number; end?: number }>();
    for (const { t, line } of this.lines) {
      const m = /^(\S+): (create|update|create \(replacement\)|update \(create again\)) (\.\.\.|done)/.exec(line);
      if (!m) continue;
      const name = m[1] as string;
      if (m[3] === "...") out.set(name, { start: t });
      else {
        const s = out.get(name);
        if (s) s.end = t;
      }
    }
    return out;
  }
}
