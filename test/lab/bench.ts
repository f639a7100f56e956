/**
 * `npm run bench [-- --json] [--only <scenario>]`: issue 5's benchmark on the bench lab
 * (`.lab-bench`, 127.0.0.150-199). Scenarios: provision, upgrade, noop, ssh_sessions_per_node, eval
 * (see test/lab/bench/). Prints a table; with `--json`, one JSON object as the last line.
 * Not part of `npm test`: nothing here asserts a time.
 */
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";
import { parseOptions, wants } from "./bench/options";
import { runProvision, CLUSTER, type ProvisionOutcome } from "./bench/provision";
import { runNoop } from "./bench/noop";
import { MAX_UNAVAILABLE, nextMinor, upgradeCluster, upgradeUnsupported, type UpgradeEntry } from "./bench/upgrade";
import { runEval } from "./bench/eval";
import { calibrate } from "./bench/calibrate";
import { benchLabDown } from "./bench/lab";
import { machine } from "./bench/machine";
import { renderTable } from "./bench/report";
import { RESULTS_DIR } from "./bench/timeline";
import type { BenchResult } from "./bench/result";

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const say = (l: string): void => void process.stderr.write(`bench: ${l}\n`);
  const result: BenchResult = { machine: machine() };
  const needCluster = ["provision", "upgrade", "noop", "ssh_sessions_per_node"].some((s) => opts.only.includes(s as never));
  try {
    if (needCluster) {
      let base: ProvisionOutcome = await runProvision(say);
      if (wants(opts, "provision")) result.provision = base.provision;
      if (wants(opts, "ssh_sessions_per_node")) result.ssh_sessions_per_node = base.sessions;
      result.calibration = await calibrate("cp-1");
      if (wants(opts, "noop")) result.noop = await runNoop(base.stackFile, say);
      if (wants(opts, "upgrade")) {
        const target = nextMinor(CLUSTER.version);
        const why = await upgradeUnsupported(base.stackFile, target);
        if (why !== undefined) result.upgrade = { skipped: why };
        else {
          const entries: UpgradeEntry[] = [];
          for (const [i, k] of MAX_UNAVAILABLE.entries()) {
            if (i > 0) base = await runProvision(say);
            entries.push(await upgradeCluster(base.stackFile, target, k, say));
          }
          result.upgrade = { entries };
        }
      }
    }
  } finally {
    if (needCluster) await benchLabDown();
  }
  if (wants(opts, "eval")) result.eval = await runEval(opts.evalSizes, say);

  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + "\n");
  process.stdout.write(renderTable(result) + `\nfull result: ${file}\n`);
  if (opts.json) process.stdout.write(JSON.stringify(result) + "\n");
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
