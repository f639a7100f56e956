/**
 * `npm run fidelity`: the lab's kubeadm stand-in against real kubeadm binaries.
 *
 *   npm run fidelity [-- --versions v1.34.4,1.36] [--jobs N] [--keep]
 *
 * Builds (or takes from the cache) real kubeadm with tools/build-kubeadm.sh, then gives every case of
 * cases.ts to real kubeadm and to the stand-in, each on its own throwaway node (private mount and UTS
 * namespace, runtime sockets listening), and compares the kubelet files and the outcome byte for
 * byte. Prints the table and a diff for every difference, writes both to .fidelity/report.md, and
 * ends with `fidelity: N passed, M failed`. Exit 1 when a difference is not in known.ts, when a
 * known.ts entry matches nothing, when a version could not be built, or when a real run that must
 * succeed did not (the harness itself is then broken).
 * Network: only the Go module proxy, and only while a version is not yet in the cache.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "../lab/nodes/paths";
import { CONFIG_YAML, FLAGS_ENV, FidelityCase, INPUTS, KUBELET_FILES, allCases, minorOf } from "./cases";
import { compareArtifacts, klogWarnings } from "./compare";
import { KNOWN_DIFFERENCES, explain } from "./known";
import { runReal, runStandin, SideResult } from "./nodes";
import { CaseResult, counts, renderTable, gateText } from "./report";

/** Command-line options of the fidelity run. */
export interface FidelityOptions {
  /** versions or minors for tools/build-kubeadm.sh (default: its pinned list) */
  versions: string[];
  /** cases run side by side (default 2) */
  jobs: number;
  /** keep the work folder */
  keep: boolean;
}

/** Parses `--versions a,b`, `--jobs N`, `--keep`. */
export function parseOptions(argv: string[]): FidelityOptions {
  const o: FidelityOptions = { versions: [], jobs: 2, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (v === undefined || v === "") throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--keep") o.keep = true;
    else if (a.startsWith("--versions")) o.versions = value().split(",").filter((s) => s !== "");
    else if (a.startsWith("--jobs")) {
      o.jobs = Number(value());
      if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error(`--jobs must be a positive integer`);
    } else throw new Error(`unknown argument ${a} (use --versions a,b --jobs N --keep)`);
  }
  return o;
}

/** Runs tools/build-kubeadm.sh; resolves with version -> binary for what it built and the failures it printed. */
export function buildKubeadm(versions: string[]): Promise<{ binaries: Map<string, string>; ok: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, "tools", "build-kubeadm.sh"), versions, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      const binaries = new Map<string, string>();
      for (const line of out.split("\n")) {
        const m = /^(v\d+\.\d+\.\d+) (\/\S+)$/.exec(line.trim());
        if (m) binaries.set(m[1], m[2]);
      }
      resolve({ binaries, ok: code === 0 });
    });
  });
}

async function pool<T>(items: T[], jobs: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
}

/** Checks that the harness really ran kubeadm: the plain detected case must succeed, write the files and restart the kubelet. */
export function harnessProblems(c: FidelityCase, real: SideResult): string[] {
  if (c.input.id !== "detected" || c.gate !== "default") return [];
  const problems: string[] = [];
  if (real.code !== 0) problems.push(`real kubeadm failed: ${real.stderr.trim().split("\n").slice(-3).join(" / ")}`);
  for (const f of [CONFIG_YAML, FLAGS_ENV]) {
    if (real.artifacts[f]?.text === undefined) problems.push(`real kubeadm wrote no ${f}`);
  }
  if (!real.systemctlCalls?.includes("restart kubelet")) problems.push(`real kubeadm did not call 'systemctl restart kubelet' (calls: ${JSON.stringify(real.systemctlCalls)})`);
  return problems.map((p) => `${c.version} ${c.input.id}: ${p}`);
}

async function runCase(work: string, binary: string, c: FidelityCase): Promise<{ result: CaseResult; real: SideResult; standin: SideResult }> {
  const dir = path.join(work, c.version, c.gate, c.input.id);
  const real = await runReal(path.join(dir, "real"), binary, c);
  const standin = await runStandin(path.join(dir, "standin"), c.version, c);
  const comparisons = compareArtifacts(real.artifacts, standin.artifacts);
  const differences = comparisons.filter((x) => !x.same).map((x) => ({ artifact: x.name, ...explain(c, x.name, x.diff), diff: x.diff }));
  return { result: { case: c, standinCommand: standin.args.slice(0, standin.args.indexOf("--config")).join(" "), comparisons, differences }, real, standin };
}

/** Groups identical diffs so each is printed once, with the cases that show it. */
function differenceReport(results: CaseResult[]): string {
  const groups = new Map<string, { artifact: string; known: string; cases: string[] }>();
  for (const r of results) {
    for (const d of r.differences) {
      const key = `${d.artifact}\n${d.diff}`;
      const known = [...d.known.map((k) => k.id), ...(d.unexplained.length > 0 ? ["NOT KNOWN"] : [])].join(", ");
      const g = groups.get(key) ?? { artifact: d.artifact, known, cases: [] };
      g.cases.push(`${r.case.version}/${gateText(r.case.gate)}/${r.case.input.id}`);
      groups.set(key, g);
    }
  }
  const out: string[] = [];
  for (const [key, g] of groups) {
    const diff = key.slice(key.indexOf("\n") + 1);
    out.push(`### ${g.artifact} (${g.known}), ${g.cases.length} case(s): ${g.cases.join(" ")}\n\n\`\`\`diff\n${diff}\`\`\`\n`);
  }
  return out.join("\n");
}

/** The whole run; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const opts = parseOptions(argv);
  const t0 = Date.now();
  const built = await buildKubeadm(opts.versions);
  const tBuild = Date.now();
  const versions = [...built.binaries.keys()].sort((a, b) => minorOf(a) - minorOf(b));
  const problems: string[] = [];
  if (!built.ok) problems.push("tools/build-kubeadm.sh failed for some version (see above)");
  if (versions.length === 0) {
    process.stdout.write("fidelity: 0 passed, 1 failed\n");
    return 1;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-"));
  const cases = allCases(versions);
  const results: CaseResult[] = [];
  const warnings = new Map<string, Set<string>>();
  let done = 0;
  try {
    await pool(cases, opts.jobs, async (c) => {
      const { result, real, standin } = await runCase(work, built.binaries.get(c.version)!, c);
      results.push(result);
      problems.push(...harnessProblems(c, real));
      for (const [side, r] of [["real", real], ["stand-in", standin]] as const) {
        for (const w of klogWarnings(r.stderr)) {
          const k = `${side}: ${w}`;
          if (!warnings.has(k)) warnings.set(k, new Set());
          warnings.get(k)!.add(`${c.version}/${gateText(c.gate)}/${c.input.id}`);
        }
      }
      done++;
      if (done % 24 === 0 || done === cases.length) process.stderr.write(`fidelity: ${done}/${cases.length} cases\n`);
    });
  } finally {
    if (opts.keep) process.stderr.write(`fidelity: work folder kept: ${work}\n`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
  const order = (r: CaseResult): string => `${String(r.case.minor).padStart(3, "0")}|${["default", "on", "off"].indexOf(r.case.gate)}|${String(INPUTS.indexOf(r.case.input)).padStart(2, "0")}`;
  results.sort((a, b) => (order(a) < order(b) ? -1 : 1));

  const stale = KNOWN_DIFFERENCES.filter((k) => !results.some((r) => r.differences.some((d) => d.known.includes(k))));
  for (const k of stale) problems.push(`known.ts entry ${k.id} matches no difference any more: remove it`);

  const table = renderTable(results, versions);
  const fallback = results.some((r) => r.standinCommand === "init");
  const report = [
    `# Fidelity: real kubeadm vs the lab's stand-in, \`kubeadm init phase kubelet-start\``,
    "",
    `Artifacts compared byte for byte: outcome (exit status and error text), ${KUBELET_FILES.join(", ")} (content and mode).`,
    fallback ? "The stand-in has no `init phase kubelet-start`: its whole `init` ran instead (its kubelet-start phase writes the same files)." : "",
    "",
    table,
    "## Inputs",
    "",
    ...INPUTS.map((i) => `- ${i.id}: ${i.title}`),
    "",
    "## Known differences",
    "",
    ...KNOWN_DIFFERENCES.map((k) => `- ${k.id} (1.${k.minors[0]}-1.${k.minors[1]}, ${k.artifacts.join(", ")}): ${k.reason}`),
    "",
    "## Differences",
    "",
    differenceReport(results),
    "## klog warnings printed",
    "",
    ...[...warnings].map(([w, cs]) => `- ${w} (${cs.size} case(s), e.g. ${[...cs][0]})`),
    "",
  ].join("\n");
  const reportFile = path.join(REPO_ROOT, ".fidelity", "report.md");
  fs.mkdirSync(path.dirname(reportFile), { recursive: true });
  fs.writeFileSync(reportFile, report);

  process.stdout.write(`${table}\n${differenceReport(results.filter((r) => r.differences.some((d) => d.unexplained.length > 0)))}`);
  for (const p of problems) process.stdout.write(`fidelity: PROBLEM: ${p}\n`);
  const { passed, failed } = counts(results);
  process.stdout.write(
    `fidelity: report (table, every diff, warnings) in ${path.relative(process.cwd(), reportFile)}; build ${Math.round((tBuild - t0) / 1000)} s, ` +
      `${cases.length} cases ${Math.round((Date.now() - tBuild) / 1000)} s\n`,
  );
  process.stdout.write(`fidelity: ${passed} passed, ${failed + problems.length} failed\n`);
  return failed + problems.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`fidelity: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(2);
    },
  );
}
