/** `npm run bench [-- --json] [--only <scenario>]`: the command line of the benchmark. */

export const SCENARIOS = ["provision", "upgrade", "noop", "ssh_sessions_per_node", "eval"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface BenchOptions {
  /** Print one JSON object as the last line. */
  json: boolean;
  /** Run only these scenarios (default: all). */
  only: Scenario[];
  /** Node counts for `eval` (default 10, 100, 1000). */
  evalSizes: number[];
}

export const USAGE = `usage: npm run bench -- [--json] [--only ${SCENARIOS.join("|")}] [--eval-sizes 10,100,1000]`;

export function parseOptions(argv: string[]): BenchOptions {
  const o: BenchOptions = { json: false, only: [], evalSizes: [10, 100, 1000] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--json") o.json = true;
    else if (a === "--only" || a.startsWith("--only=")) {
      const v = a === "--only" ? argv[++i] : a.slice("--only=".length);
      for (const s of (v ?? "").split(",")) {
        if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--only: unknown scenario ${JSON.stringify(s)}\n${USAGE}`);
        o.only.push(s as Scenario);
      }
    } else if (a === "--eval-sizes" || a.startsWith("--eval-sizes=")) {
      const v = a === "--eval-sizes" ? argv[++i] : a.slice("--eval-sizes=".length);
      o.evalSizes = (v ?? "").split(",").map((x) => {
        const n = Number(x);
        if (!Number.isInteger(n) || n < 1) throw new Error(`--eval-sizes: ${JSON.stringify(x)} is not a node count\n${USAGE}`);
        return n;
      });
    } else if (a === "--help" || a === "-h") throw new Error(USAGE);
    else throw new Error(`unknown argument ${JSON.stringify(a)}\n${USAGE}`);
  }
  if (o.only.length === 0) o.only = [...SCENARIOS];
  return o;
}

/** Whether a scenario runs. `ssh_sessions_per_node` and `noop` need the fresh provision. */
export function wants(o: BenchOptions, s: Scenario): boolean {
  return o.only.includes(s);
}
