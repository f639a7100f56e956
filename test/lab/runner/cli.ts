/**
 * `npm run lab -- preview|apply|destroy ...` (dispatched by test/lab/cli.ts):
 *
 *   preview <stack file> [--program P] [--state F] [--parallel N]
 *   apply   <stack file> [--program P] [--state F] [--parallel N]
 *   destroy [<stack file> | --stack NAME] [--state F]
 *
 * Exit code 0 on success, 1 on failure, 2 on bad usage. Output: progress lines, then the stack
 * outputs (secret ones shown as [secret]; a list of lines, such as `plan`, one per line). `apply` runs a
 * preview first, as `pulumi up` does, and runs nothing when the program fails in it.
 */
import { runProgram, RunOptions } from "./engine";
import { Mode } from "./types";

interface Parsed {
  stackFile?: string;
  program?: string;
  state?: string;
  stack?: string;
  parallel?: number;
}

function parse(args: string[]): Parsed | string {
  const p: Parsed = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = (): string | undefined => args[++i];
    if (a === "--program") p.program = next();
    else if (a === "--state") p.state = next();
    else if (a === "--stack") p.stack = next();
    else if (a === "--parallel") p.parallel = Number(next());
    else if (a.startsWith("--")) return `unknown option ${a}`;
    else if (p.stackFile === undefined) p.stackFile = a;
    else return `unexpected argument ${a}`;
  }
  if (p.parallel !== undefined && !(Number.isInteger(p.parallel) && p.parallel > 0)) return "--parallel takes a positive integer";
  return p;
}

async function run(mode: Mode, args: string[]): Promise<number> {
  const p = parse(args);
  if (typeof p === "string" || (mode !== "destroy" && !p.stackFile) || (mode === "destroy" && !p.stackFile && !p.stack)) {
    process.stderr.write(
      `${typeof p === "string" ? p + "\n" : ""}usage: npm run lab -- ${mode} ${mode === "destroy" ? "<stack file> | --stack NAME" : "<stack file>"} [--program P] [--state F] [--parallel N]\n`,
    );
    return 2;
  }
  const opts: RunOptions = { mode, stackFile: p.stackFile, stack: p.stack, programPath: p.program, statePath: p.state, parallel: p.parallel };
  if (mode === "apply") {
    // Like `pulumi up`: a preview first, and nothing runs when the program fails in it (bad args, a
    // version step kubeadm refuses).
    const lines: string[] = [];
    const checked = await runProgram({ ...opts, mode: "preview", log: (l) => void lines.push(l) });
    if (checked.errors.length > 0) {
      process.stderr.write(`apply: the preview failed, nothing was run:\n${checked.errors.map((e) => `  ${e}`).join("\n")}\n`);
      return 1;
    }
  }
  const result = await runProgram(opts);
  if (mode !== "destroy" && Object.keys(result.outputs).length > 0) {
    process.stdout.write("outputs:\n");
    for (const [k, v] of Object.entries(result.outputs)) {
      if (Array.isArray(v) && v.every((x) => typeof x === "string")) process.stdout.write(`  ${k}:\n${v.map((x) => `    ${x}`).join("\n")}\n`);
      else process.stdout.write(`  ${k}: ${JSON.stringify(v)}\n`);
    }
  }
  return result.ok ? 0 : 1;
}

export async function preview(args: string[]): Promise<number> {
  return run("preview", args);
}

export async function apply(args: string[]): Promise<number> {
  return run("apply", args);
}

export async function destroy(args: string[]): Promise<number> {
  return run("destroy", args);
}
