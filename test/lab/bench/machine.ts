/** The machine and the code a benchmark ran on, for the report. */
import { execFileSync, spawnSync } from "child_process";
import * as os from "os";
import { REPO_ROOT } from "../nodes";

export function machine(): Record<string, string | number> {
  let commit = process.env.BENCH_COMMIT ?? "";
  if (!commit) {
    try {
      commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      const dirty = execFileSync("git", ["status", "--porcelain", "--", "components", "index.ts"], { cwd: REPO_ROOT, encoding: "utf8" }).trim();
      if (dirty) commit += " (components/ or index.ts modified)";
    } catch {
      commit = "unknown";
    }
  }
  return {
    cpus: os.availableParallelism(),
    cpu_model: os.cpus()[0]?.model ?? "unknown",
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    // `ssh -V` prints to stderr
    ssh: spawnSync("ssh", ["-V"], { encoding: "utf8" }).stderr?.trim() || "unknown",
    commit,
  };
}
