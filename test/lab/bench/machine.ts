/** The machine, the moment and the code a benchmark ran on, for the report. */
import { execFileSync, spawnSync } from "child_process";
import * as os from "os";
import { REPO_ROOT } from "../nodes";
import { PULUMI_VERSION } from "../engine/stack";

/** What the report says about where it was measured. */
export interface Machine {
  date: string;
  cpus: number;
  cpu_model: string;
  memory_gb: number;
  /** 1-minute load average when the bench started (others may be working on the machine). */
  load_at_start: number;
  node: string;
  ssh: string;
  pulumi: string;
  commit: string;
}

function gitCommit(): string {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "components", "index.ts", "program.ts"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
    return dirty ? `${commit} (components/ or the program modified)` : commit;
  } catch {
    return "unknown (not a git checkout)";
  }
}

/** Describes this machine and checkout now. */
export function machine(): Machine {
  // BENCH_COMMIT names the commit when the bench runs from a copy outside git (an export of a commit,
  // so that uncommitted work in the checkout does not land in the figures).
  const commit = process.env["BENCH_COMMIT"] ?? gitCommit();
  return {
    date: new Date().toISOString(),
    cpus: os.availableParallelism(),
    cpu_model: os.cpus()[0]?.model ?? "unknown",
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    load_at_start: os.loadavg()[0] as number,
    node: process.version,
    // `ssh -V` prints to stderr
    ssh: spawnSync("ssh", ["-V"], { encoding: "utf8" }).stderr?.trim() || "unknown",
    pulumi: PULUMI_VERSION,
    commit,
  };
}
