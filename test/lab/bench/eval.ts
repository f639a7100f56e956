/**
 * Scenario `eval`: program evaluation for each node count, each run in its own child process
 * (eval-child.ts) under Pulumi's mock runtime, repeated; medians and spreads, and how time and memory
 * grow between sizes (flat per-node cost = linear); beside each size, the SDK's own cost for as many
 * bare Commands (eval-bare.ts), as pulumi-command's constructor makes them and as the component does
 * (`RemoteCommand`, without the SDK's per-promise stack traces), and the component's own Commands
 * registered again with their inputs as plain values (`replay`): the last is the floor the component's
 * evaluation cannot go under with the Commands it registers; what it takes above it is its own work
 * (its Outputs, dependencies and rendering).
 */
import { spawn } from "child_process";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { REPO_ROOT } from "../nodes";
import { tsxBinary } from "../nodes/wrappers";
import { Summary, round, summarize } from "./stats";

/** What one child reported. */
export interface EvalSample {
  nodes: number;
  seconds: number;
  load_s: number;
  eval_s: number;
  cpu_s: number;
  peak_rss_mb: number;
  resources: number;
  commands: number;
  inputs_mb: number;
}

/** One node count over its runs. */
export interface EvalSize {
  nodes: number;
  /** Whole process: load + evaluation. */
  seconds: Summary;
  load_s: Summary;
  eval_s: Summary;
  cpu_s: Summary;
  peak_rss_mb: Summary;
  resources: number;
  commands: number;
  inputs_mb: number;
  /** Evaluation seconds per node (median). */
  eval_s_per_node: number;
  /** Peak RSS per node above the smallest size (median), MB. */
  rss_mb_per_node?: number;
  /**
   * The reference (eval-bare.ts): the SDK and mocks alone registering as many empty Commands, one run
   * after this size's runs: evaluation seconds, CPU seconds, peak RSS MB.
   */
  bare: BareFigures;
  /** The same, each Command constructed as the component constructs its own (`RemoteCommand` under `withoutStackTraces`, a connection per seven). */
  bare_quiet: BareFigures;
  /**
   * The component's own Commands of this size's first run (names, inputs), registered again as
   * `bare_quiet`'s are, each input a plain value known up front: no Outputs, no dependencies.
   */
  replay: BareFigures;
}

/** What eval-bare.ts reports: evaluation seconds, CPU seconds, peak RSS MB. */
export interface BareFigures {
  eval_s: number;
  cpu_s: number;
  peak_rss_mb: number;
}

/** The scenario's result. */
export interface EvalFigures {
  runtime: string;
  /** How the cluster got its args: the root program from stack config, or built with an Output arg. */
  args: "config" | "output";
  sizes: EvalSize[];
  growth: string;
}

function child(n: number, file: "eval-child.ts", ...args: string[]): Promise<EvalSample>;
function child(n: number, file: "eval-bare.ts", ...args: string[]): Promise<BareFigures>;
function child(n: number, file: string, ...args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const p = spawn("nice", [tsxBinary(), join(__dirname, file), String(n), ...args], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("error", reject);
    p.on("close", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !last.startsWith("{")) reject(new Error(`${file} ${n}: exit ${code}: ${err.trim() || out.trim()}`));
      else resolve(JSON.parse(last));
    });
  });
}

function rounded(b: BareFigures): BareFigures {
  return { eval_s: round(b.eval_s, 2), cpu_s: round(b.cpu_s, 2), peak_rss_mb: round(b.peak_rss_mb, 0) };
}

/** In words: how evaluation time and memory grow from the smallest size to the largest. */
export function describeGrowth(sizes: EvalSize[]): string {
  const a = sizes[0];
  const b = sizes[sizes.length - 1];
  if (!a || !b || a === b) return "one size only";
  const x = b.nodes / a.nodes;
  const t = b.eval_s.median / a.eval_s.median;
  return (
    `${a.nodes} -> ${b.nodes} nodes (x${round(x, 0)}): evaluation x${round(t, 1)} (~ n^${round(Math.log(t) / Math.log(x), 2)}), ` +
    `peak RSS ${a.peak_rss_mb.median} -> ${b.peak_rss_mb.median} MB`
  );
}

/**
 * Runs every size `runs` times (sizes interleaved, so a busy moment does not fall on one size only);
 * `args`: the root program from stack config, or the cluster built with `controlPlaneEndpoint` as an Output.
 */
export async function runEval(sizes: number[], runs: number, say: (l: string) => void, args: "config" | "output" = "config"): Promise<EvalFigures> {
  const samples = new Map<number, EvalSample[]>(sizes.map((n) => [n, []]));
  const dumps = mkdtempSync(join(tmpdir(), "pk-eval-"));
  const dumpOf = (n: number): string => join(dumps, `${n}.json`);
  try {
    for (let r = 1; r <= runs; r++) {
      for (const n of sizes) {
        say(`eval: ${n} nodes, run ${r}/${runs} ...`);
        const mode = args === "output" ? ["output-args"] : [];
        samples.get(n)?.push(await child(n, "eval-child.ts", ...mode, ...(r === 1 ? [`--dump=${dumpOf(n)}`] : [])));
      }
    }
    return await summarizeSizes(sizes, samples, dumpOf, say, args);
  } finally {
    rmSync(dumps, { recursive: true, force: true });
  }
}

/** Each size's figures from its samples, with the references run beside them. */
async function summarizeSizes(sizes: number[], samples: Map<number, EvalSample[]>, dumpOf: (n: number) => string, say: (l: string) => void, args: "config" | "output"): Promise<EvalFigures> {
  const out: EvalSize[] = [];
  for (const n of sizes) {
    const s = samples.get(n) as EvalSample[];
    const first = s[0] as EvalSample;
    say(`eval: references, ${first.commands} Commands ...`);
    const bare = await child(first.commands, "eval-bare.ts");
    const quiet = await child(first.commands, "eval-bare.ts", "quiet");
    const replay = await child(first.commands, "eval-bare.ts", "replay", dumpOf(n));
    const size: EvalSize = {
      nodes: n,
      seconds: summarize(s.map((x) => x.seconds)),
      load_s: summarize(s.map((x) => x.load_s)),
      eval_s: summarize(s.map((x) => x.eval_s)),
      cpu_s: summarize(s.map((x) => x.cpu_s)),
      peak_rss_mb: summarize(s.map((x) => x.peak_rss_mb), 0),
      resources: first.resources,
      commands: first.commands,
      inputs_mb: round(first.inputs_mb, 2),
      eval_s_per_node: round(summarize(s.map((x) => x.eval_s), 4).median / n, 4),
      bare: rounded(bare),
      bare_quiet: rounded(quiet),
      replay: rounded(replay),
    };
    const base = out[0];
    if (base) size.rss_mb_per_node = round((size.peak_rss_mb.median - base.peak_rss_mb.median) / (n - base.nodes), 2);
    out.push(size);
  }
  return { args, runtime: "Pulumi's mock runtime (pulumi.runtime.setMocks), not the engine: the program and the component as in `pulumi up`, no command run", sizes: out, growth: describeGrowth(out) };
}
