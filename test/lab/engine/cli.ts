/**
 * `npm run lab -- preview|apply|destroy|refresh <stack file>` (dispatched by test/lab/cli.ts): thin
 * wrappers over `pulumi preview|up|destroy|refresh` on the lab stack, run by the REAL Pulumi CLI and
 * engine through the Automation API (stack.ts). The CLI's own output is printed as it comes; exit code
 * 0 on success, 1 on failure, 2 on bad usage.
 *
 *   preview <stack file> [--parallel N] [--expect-no-changes]
 *   apply   <stack file> [--parallel N] [--replace URN]...
 *   destroy <stack file>
 *   refresh <stack file>
 *
 * Every command also takes `--json FILE` (write the engine's record of the run, `LabRunResult`, there)
 * and `--quiet` (do not echo the CLI's output).
 *
 * When the inline program throws (a validation error), Pulumi's inline runtime leaves promises of the
 * root Stack resource rejected after the engine has already been told; Node would end the process on
 * them. This process notes each such message once on stderr instead: the failure itself is the
 * engine's to report.
 */
import * as fs from "fs";
import { parseArgs } from "util";
import { labStack } from "./stack";
import { Mode, runStack } from "./run";

async function run(mode: Mode, args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        parallel: { type: "string" },
        replace: { type: "string", multiple: true },
        "expect-no-changes": { type: "boolean" },
        json: { type: "string" },
        quiet: { type: "boolean" },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    parsed = undefined;
  }
  const parallel = parsed?.values.parallel !== undefined ? Number(parsed.values.parallel) : undefined;
  if (!parsed || parsed.positionals.length !== 1 || (parallel !== undefined && !(Number.isInteger(parallel) && parallel > 0))) {
    process.stderr.write(`usage: npm run lab -- ${mode === "up" ? "apply" : mode} <Pulumi.<stack>.yaml> [--parallel N] [--replace URN] [--expect-no-changes]\n`);
    return 2;
  }
  const seen = new Set<string>();
  process.on("unhandledRejection", (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    if (!seen.has(message)) process.stderr.write(`lab: the program failed: ${message}\n`);
    seen.add(message);
  });
  const quiet = parsed.values.quiet === true;
  const lab = await labStack({ stackFile: parsed.positionals[0]! });
  if (!quiet) for (const i of lab.injected) process.stdout.write(`lab: injected ${i}\n`);
  const result = await runStack(lab.stack, mode, {
    echo: !quiet,
    parallel,
    replace: parsed.values.replace,
    expectNoChanges: parsed.values["expect-no-changes"],
  });
  if (parsed.values.json !== undefined) fs.writeFileSync(parsed.values.json, JSON.stringify(result), { mode: 0o600 });
  // The CLI's preview text leaves out the engine's diagnostics (the component's warnings, a refusal):
  // print them, and what failed.
  if (!quiet && mode === "preview") for (const d of result.diagnostics) process.stderr.write(`lab: ${d}\n`);
  // The Automation API's error repeats the CLI's whole output: when that was printed as it came, only say so.
  // When the CLI printed nothing (it failed before its first line), its error is the only reason there is.
  const shown = !quiet && result.output.trim() !== "";
  if (!result.ok) process.stderr.write(`lab: ${mode} failed${!shown && result.error !== undefined ? `: ${result.error}` : " (the CLI's output above says why)"}\n`);
  return result.ok ? 0 : 1;
}

export const preview = (args: string[]) => run("preview", args);
export const apply = (args: string[]) => run("up", args);
export const destroy = (args: string[]) => run("destroy", args);
export const refresh = (args: string[]) => run("refresh", args);
