/**
 * Scenario `eval`: the root program under Pulumi's mock runtime, commands not executed, for each node
 * count in its own child process (eval-child.ts). Growth: seconds and MB per node at each size, and the
 * marginal cost between consecutive sizes (flat = linear).
 */
import { spawn } from "child_process";
import { join } from "path";
import { REPO_ROOT } from "../nodes";
import { round } from "./bounds";

export interface EvalSize {
  nodes: number;
  seconds: number;
  load_s: number;
  eval_s: number;
  peak_rss_mb: number;
  resources: number;
  commands: number;
  inputs_mb: number;
  /** eval_s / nodes */
  eval_s_per_node: number;
  /** (eval_s - previous size's eval_s) / (nodes - previous nodes); unset for the first size. */
  marginal_s_per_node?: number;
  /** (peak_rss_mb - previous) / (nodes - previous nodes) */
  marginal_mb_per_node?: number;
}

export interface EvalFigures {
  sizes: EvalSize[];
  growth: string;
}

function child(n: number): Promise<Omit<EvalSize, "eval_s_per_node">> {
  return new Promise((resolve, reject) => {
    const tsx = join(REPO_ROOT, "node_modules", ".bin", "tsx");
    const p = spawn(tsx, [join(__dirname, "eval-child.ts"), String(n)], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("error", reject);
    p.on("close", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !last.startsWith("{")) reject(new Error(`eval ${n} nodes: exit ${code}: ${err.trim() || out.trim()}`));
      else resolve(JSON.parse(last) as Omit<EvalSize, "eval_s_per_node">);
    });
  });
}

export async function runEval(sizes: number[], say: (l: string) => void): Promise<EvalFigures> {
  const out: EvalSize[] = [];
  for (const n of sizes) {
    say(`eval: ${n} nodes ...`);
    const r = await child(n);
    const prev = out[out.length - 1];
    out.push({
      nodes: r.nodes,
      seconds: round(r.seconds),
      load_s: round(r.load_s),
      eval_s: round(r.eval_s),
      peak_rss_mb: round(r.peak_rss_mb, 1),
      resources: r.resources,
      commands: r.commands,
      inputs_mb: round(r.inputs_mb, 1),
      eval_s_per_node: round(r.eval_s / r.nodes, 4),
      ...(prev
        ? {
            marginal_s_per_node: round((r.eval_s - prev.eval_s) / (r.nodes - prev.nodes), 4),
            marginal_mb_per_node: round((r.peak_rss_mb - prev.peak_rss_mb) / (r.nodes - prev.nodes), 2),
          }
        : {}),
    });
  }
  return { sizes: out, growth: describeGrowth(out) };
}

/** In words: how evaluation time and memory grow from the smallest to the largest size. */
export function describeGrowth(sizes: EvalSize[]): string {
  const a = sizes[0];
  const b = sizes[sizes.length - 1];
  if (!a || !b || a === b) return "one size only";
  const nodes = b.nodes / a.nodes;
  const t = b.eval_s / a.eval_s;
  const exp = Math.log(t) / Math.log(nodes);
  return `${a.nodes} -> ${b.nodes} nodes (x${round(nodes, 0)}): evaluation x${round(t, 1)} (~ n^${round(exp, 2)}), ` +
    `peak RSS ${a.peak_rss_mb} -> ${b.peak_rss_mb} MB; resources ${a.resources} -> ${b.resources}`;
}
