/** `npm run bench -- [options]`: the benchmark's command line. */
import type { StandinLauncher } from "../nodes/wrappers";

/** The scenarios `--only` can pick; `ssh_sessions_per_node` comes with provision, noop and upgrade. */
export const SCENARIOS = ["provision", "noop", "upgrade", "eval"] as const;
/** One scenario name. */
export type Scenario = (typeof SCENARIOS)[number];

/** The parsed command line. */
export interface BenchOptions {
  /** Print one JSON object as the last line. */
  json: boolean;
  only: Scenario[];
  /** Repetitions of every scenario (default 3). */
  runs: number;
  /** Node counts for `eval` (default 10, 100, 1000). */
  evalSizes: number[];
  /**
   * How `eval` gives the cluster its args: `config` (default: the root program from stack config) or
   * `output` (built directly, `controlPlaneEndpoint` as an Output: the deferred-args path).
   */
  evalArgs: "config" | "output";
  /** Workers of the bench cluster (default 20; 3 control-plane nodes always). */
  workers: number;
  /** How the nodes run the stand-ins (default bundle). */
  standin: StandinLauncher;
  /** `pulumi up --parallel`; default unset: the CLI's own default (4 x CPUs). */
  parallel?: number;
  /** The stack's `maxConcurrentJoins`; default unset: the component's default (10). */
  joins?: number;
  /**
   * Every stand-in duration (cluster.ts) times this whole number, on both sides (default 1): how the
   * ratio moves when kubeadm's own steps take longer, as they do on real machines.
   */
  durationsScale: number;
}

/** The usage line. */
export const USAGE =
  `usage: npm run bench -- [--json] [--only ${SCENARIOS.join(",")}] [--runs 3] [--eval-sizes 10,100,1000] [--eval-args config|output] ` +
  "[--workers 20] [--standin bundle|tsx] [--parallel N] [--joins N] [--durations-scale 1]";

function positive(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: ${JSON.stringify(v)} is not a positive integer\n${USAGE}`);
  return n;
}

/**
 * Parses the arguments after `npm run bench --`.
 * @throws Error with the usage on an unknown or malformed argument.
 */
export function parseOptions(argv: string[]): BenchOptions {
  const o: BenchOptions = { json: false, only: [], runs: 3, evalSizes: [10, 100, 1000], evalArgs: "config", workers: 20, standin: "bundle", durationsScale: 1 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf("=");
    const [flag, inline] = arg.startsWith("--") && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    if (flag === "--json") o.json = true;
    else if (flag === "--only") {
      for (const s of (value() ?? "").split(",")) {
        if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--only: unknown scenario ${JSON.stringify(s)}\n${USAGE}`);
        o.only.push(s as Scenario);
      }
    } else if (flag === "--runs") o.runs = positive(flag, value());
    else if (flag === "--eval-sizes") o.evalSizes = (value() ?? "").split(",").map((x) => positive(flag, x));
    else if (flag === "--eval-args") {
      const v = value();
      if (v !== "config" && v !== "output") throw new Error(`--eval-args: ${JSON.stringify(v)} is not config or output\n${USAGE}`);
      o.evalArgs = v;
    } else if (flag === "--workers") o.workers = positive(flag, value());
    else if (flag === "--parallel") o.parallel = positive(flag, value());
    else if (flag === "--joins") o.joins = positive(flag, value());
    else if (flag === "--durations-scale") o.durationsScale = positive(flag, value());
    else if (flag === "--standin") {
      const v = value();
      if (v !== "bundle" && v !== "tsx") throw new Error(`--standin: ${JSON.stringify(v)} is not bundle or tsx\n${USAGE}`);
      o.standin = v;
    } else throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
  }
  if (o.only.length === 0) o.only = [...SCENARIOS];
  return o;
}
