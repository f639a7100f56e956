/**
 * `npm run bench [-- --json] [--only provision,noop,upgrade,eval] [--runs 3] ...`: the benchmark on its
 * own lab (`.lab-bench`, 127.0.0.150-199) and the REAL Pulumi CLI and engine; see cluster.ts (the
 * cluster scenarios beside the operator's floor), eval.ts, calibrate.ts. Prints a report; with
 * `--json`, one JSON object as the last line; saves the result under `tmp/bench/`. Not part of
 * `npm test`: nothing here asserts a time.
 */
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";
import { REPO_ROOT } from "../nodes";
import { CALIBRATION_SAMPLES, FROM, Repetition, UPGRADES, benchDurations, runRepetition } from "./cluster";
import { runEval } from "./eval";
import { BenchCluster, benchLabDown, fitsBenchLab } from "./lab";
import { machine } from "./machine";
import { parseOptions, type BenchOptions } from "./options";
import { renderReport } from "./report";
import { BenchResult, clusterResult, stateSetup } from "./result";

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let o: BenchOptions;
  let c: BenchCluster;
  try {
    o = parseOptions(argv);
    c = fitsBenchLab({ controlPlanes: 3, workers: o.workers });
  } catch (e) {
    // A bad argument (malformed: with the usage; more workers than the lab holds): its message, without a stack trace.
    process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  const say = (l: string): void => void process.stderr.write(`bench ${new Date().toISOString().slice(11, 19)}: ${l}\n`);
  const m = machine();
  // The engine's --parallel: the bench's option, else PULUMI_PARALLEL as the CLI reads it, else the CLI's default.
  const envParallel = process.env.PULUMI_PARALLEL;
  const parallel =
    o.parallel !== undefined ? String(o.parallel) : envParallel !== undefined && envParallel !== "" ? `${envParallel} (PULUMI_PARALLEL)` : `${4 * m.cpus} (the CLI's default, 4 x CPUs)`;
  const result: BenchResult = {
    machine: m,
    command: ["npm run bench", ...(argv.length > 0 ? ["--", ...argv] : [])].join(" "),
    setup: {
      cluster: `${c.controlPlanes} control-plane + ${c.workers} workers, containerd`,
      provision: FROM,
      upgrades: UPGRADES.map((u) => `${u.to} with maxUnavailableWorkers ${u.maxUnavailableWorkers}`),
      durations_s: benchDurations(o),
      runs: o.runs,
      standin: o.standin,
      engine_parallel: parallel,
      ...stateSetup(process.env),
      max_concurrent_joins: o.joins ?? "the component's default (10)",
      calibration_samples_per_run: CALIBRATION_SAMPLES,
    },
  };
  const dir = join(REPO_ROOT, "tmp", "bench");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${result.machine.date.replace(/[:.]/g, "-")}.json`);
  // Saved after each part, so a later failure keeps what was measured.
  const save = (): void => writeFileSync(file, JSON.stringify(result, null, 2) + "\n");
  if (o.only.some((s) => s !== "eval")) {
    const reps: Repetition[] = [];
    try {
      for (let i = 0; i < o.runs; i++) reps.push(await runRepetition(i, c, o, say));
    } finally {
      await benchLabDown();
    }
    Object.assign(result, clusterResult(reps, FROM, parallel));
    if (!o.only.includes("provision")) delete result.provision;
    save();
  }
  if (o.only.includes("eval")) {
    try {
      result.eval = await runEval(o.evalSizes, o.runs, say, o.evalArgs);
    } catch (e) {
      result.eval_error = e instanceof Error ? e.message : String(e);
    }
  }
  save();
  process.stdout.write(renderReport(result) + `full result: ${file}\n`);
  if (o.json) process.stdout.write(JSON.stringify(result) + "\n");
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
