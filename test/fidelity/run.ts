/**
 * `npm run fidelity`: the lab's kubeadm stand-in against real kubeadm binaries.
 *
 *   npm run fidelity [-- --versions v1.34.4,1.36] [--phases kubelet-start,upgrade-node,upload-config] [--jobs N] [--keep]
 *
 * Builds (or takes from the cache) real kubeadm with tools/build-kubeadm.sh, then gives every case of
 * cases.ts (`init phase kubelet-start`), upgrade.ts (`upgrade node`) and uploadconfig.ts (`init phase
 * upload-config kubeadm`; these two against a real kube-apiserver with etcd, kubeapiserver.ts) to
 * real kubeadm and to the stand-in, each on its own throwaway node (private mount and UTS namespace,
 * runtime sockets listening), and compares the kubelet files, the outcome, (upgrade) the Node's
 * annotation and (upload-config) the kubeadm-config ConfigMap's data byte for byte. Prints the tables
 * and a diff for every unexplained difference, writes all to
 * .fidelity/report.md, and ends with `fidelity: N passed, M failed`. Exit 1 when a difference is not
 * in known.ts, when a known.ts entry matches nothing (full runs), when a version could not be
 * built, or when real kubeadm did not really run (the harness itself is then broken).
 * Network: only the Go module proxy, and only while a version is not yet in the cache; the API server
 * and etcd listen on 127.0.0.1 only.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "../lab/nodes/paths";
import { CONFIG_YAML, CaseKey, FLAGS_ENV, FidelityCase, GATES, INPUTS, KUBELET_FILES, Phase, allCases, minorOf } from "./cases";
import { compareArtifacts, klogWarnings } from "./compare";
import { KNOWN_DIFFERENCES, explain } from "./known";
import { runReal, runStandin, SideResult } from "./nodes";
import { CaseResult, counts, renderTable, gateText } from "./report";
import { UPGRADE_INPUTS, UpgradeCase, runRealUpgrade, runStandinUpgrade, upgradeCases } from "./upgrade";
import { KUBE_APISERVER_VERSION, RealApi, startRealApi } from "./kubeapiserver";
import { UPLOAD_INPUTS, UploadCase, runRealUpload, runStandinUpload, uploadCases } from "./uploadconfig";

/** Command-line options of the fidelity run. */
export interface FidelityOptions {
  /** versions or minors for tools/build-kubeadm.sh (default: its pinned list) */
  versions: string[];
  /** cases run side by side (default 2) */
  jobs: number;
  /** keep the work folder */
  keep: boolean;
  /** phases to compare (default all: kubelet-start, upgrade-node, upload-config) */
  phases: string[];
}

/** Parses `--versions a,b`, `--jobs N`, `--keep`. */
export function parseOptions(argv: string[]): FidelityOptions {
  const o: FidelityOptions = { versions: [], jobs: 2, keep: false, phases: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (v === undefined || v === "") throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--keep") o.keep = true;
    else if (a.startsWith("--versions")) o.versions = value().split(",").filter((s) => s !== "");
    else if (a.startsWith("--phases")) o.phases = value().split(",").filter((s) => s !== "");
    else if (a.startsWith("--jobs")) {
      o.jobs = Number(value());
      if (!Number.isInteger(o.jobs) || o.jobs < 1) throw new Error(`--jobs must be a positive integer`);
    } else throw new Error(`unknown argument ${a} (use --versions a,b --phases p,q --jobs N --keep)`);
  }
  return o;
}

/** Runs tools/build-kubeadm.sh; resolves with version -> binary for what it built and the failures it printed. */
export function buildKubeadm(versions: string[], component = "kubeadm"): Promise<{ binaries: Map<string, string>; ok: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, "tools", "build-kubeadm.sh"), ["--component", component, ...versions], { stdio: ["ignore", "pipe", "inherit"] });
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

/** One compared kubeadm command: its cases, its inputs, and how each side runs a case. */
interface PhaseSpec {
  phase: Phase;
  title: string;
  inputs: readonly { id: string; title: string }[];
  cases(versions: string[]): CaseKey[];
  /** the phase needs the real API server */
  needsApi?: boolean;
  run(dir: string, binary: string, c: CaseKey, api: RealApi | undefined): Promise<{ real: SideResult; standin: SideResult; problems: string[] }>;
}

/** Harness checks: real kubeadm must really have run (else every comparison would be empty). */
const PHASES: PhaseSpec[] = [
  {
    phase: "kubelet-start",
    title: "`kubeadm init phase kubelet-start --config <file>`",
    inputs: INPUTS,
    cases: (versions) => allCases(versions),
    async run(dir, binary, key) {
      const c = key as FidelityCase;
      const real = await runReal(path.join(dir, "real"), binary, c);
      const standin = await runStandin(path.join(dir, "standin"), c.version, c);
      const problems: string[] = [];
      if (c.input.id === "detected" && c.gate === "default") {
        if (real.code !== 0) problems.push(`real kubeadm failed: ${real.stderr.trim().split("\n").slice(-3).join(" / ")}`);
        for (const f of [CONFIG_YAML, FLAGS_ENV]) if (real.artifacts[f]?.text === undefined) problems.push(`real kubeadm wrote no ${f}`);
        if (!real.systemctlCalls?.includes("restart kubelet")) problems.push(`real kubeadm did not call 'systemctl restart kubelet' (calls: ${JSON.stringify(real.systemctlCalls)})`);
      }
      return { real, standin, problems };
    },
  },
  {
    phase: "upgrade-node",
    title: "`kubeadm upgrade node` on a worker",
    inputs: UPGRADE_INPUTS,
    cases: (versions) => upgradeCases(versions),
    needsApi: true,
    async run(dir, binary, key, api) {
      const c = key as UpgradeCase;
      const real = await runRealUpgrade(path.join(dir, "real"), binary, c, api!);
      const standin = await runStandinUpgrade(path.join(dir, "standin"), c);
      const problems = real.apiRequests.includes("get /api/v1/namespaces/kube-system/configmaps/kubeadm-config")
        ? []
        : [`real kubeadm never read the kubeadm-config ConfigMap (requests: ${real.apiRequests.join(", ")}; ${real.stderr.trim().split("\n").slice(-2).join(" / ")})`];
      return { real, standin, problems };
    },
  },
  {
    phase: "upload-config",
    title: "`kubeadm init phase upload-config kubeadm --config <file>`",
    inputs: UPLOAD_INPUTS,
    cases: (versions) => uploadCases(versions),
    needsApi: true,
    async run(dir, binary, key, api) {
      const c = key as UploadCase;
      const real = await runRealUpload(path.join(dir, "real"), binary, c, api!);
      const standin = await runStandinUpload(path.join(dir, "standin"), c);
      // With the gate absent every minor stores the ConfigMap (1.37 refuses a NodeLocalCRISocket entry).
      const problems = c.gate !== "default" || real.apiRequests.some((r) => /^(create|update|patch) \/api\/v1\/namespaces\/kube-system\/configmaps/.test(r))
        ? []
        : [`real kubeadm never wrote the kubeadm-config ConfigMap (requests: ${real.apiRequests.join(", ")}; ${real.stderr.trim().split("\n").slice(-2).join(" / ")})`];
      return { real, standin, problems };
    },
  },
];

/** The phases `--phases` names (all by default). */
export function selectPhases(names: string[]): PhaseSpec[] {
  if (names.length === 0) return PHASES;
  for (const n of names) if (!PHASES.some((p) => p.phase === n)) throw new Error(`unknown phase ${n} (${PHASES.map((p) => p.phase).join(", ")})`);
  return PHASES.filter((p) => names.includes(p.phase));
}

async function runCase(work: string, binary: string, spec: PhaseSpec, c: CaseKey, api: RealApi | undefined): Promise<{ result: CaseResult; real: SideResult; standin: SideResult; problems: string[] }> {
  const dir = path.join(work, c.phase, c.version, c.gate, c.input.id);
  const { real, standin, problems } = await spec.run(dir, binary, c, api);
  const comparisons = compareArtifacts(real.artifacts, standin.artifacts);
  const differences = comparisons.filter((x) => !x.same).map((x) => ({ artifact: x.name, ...explain(c, x.name, x.diff), diff: x.diff }));
  const standinCommand = standin.args.filter((a) => !a.startsWith("/") && !a.startsWith("--")).join(" ");
  const tag = `${c.phase} ${c.version}/${gateText(c.gate)}/${c.input.id}`;
  return { result: { case: c, standinCommand, comparisons, differences }, real, standin, problems: problems.map((p) => `${tag}: ${p}`) };
}

/** Groups identical diffs so each is printed once, with the cases that show it. */
function differenceReport(results: CaseResult[]): string {
  const groups = new Map<string, { artifact: string; known: string; cases: string[] }>();
  for (const r of results) {
    for (const d of r.differences) {
      const key = `${r.case.phase} ${d.artifact}\n${d.diff}`;
      const known = [...d.known.map((k) => k.id), ...(d.unexplained.length > 0 ? ["NOT KNOWN"] : [])].join(", ");
      const g = groups.get(key) ?? { artifact: `${r.case.phase}: ${d.artifact}`, known, cases: [] };
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
  const phases = selectPhases(opts.phases);
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
  // The real API server for the phases that need one: built like kubeadm (one version for all cases).
  let api: RealApi | undefined;
  let apiPhases = phases.filter((p) => p.needsApi);
  if (apiPhases.length > 0) {
    const apiserver = await buildKubeadm([KUBE_APISERVER_VERSION], "kube-apiserver");
    const binary = apiserver.binaries.get(KUBE_APISERVER_VERSION);
    try {
      if (!binary) throw new Error(`tools/build-kubeadm.sh --component kube-apiserver ${KUBE_APISERVER_VERSION} failed (see above)`);
      api = await startRealApi(path.join(work, "api"), binary);
      process.stderr.write(`fidelity: API server ${api.versions.kubeApiserver} on etcd ${api.versions.etcd} at ${api.url}\n`);
    } catch (e) {
      problems.push(`no real API server, so no ${apiPhases.map((p) => p.phase).join(", ")} cases: ${(e as Error).message}`);
      apiPhases = [];
    }
  }
  const runnable = phases.filter((p) => !p.needsApi || apiPhases.includes(p));
  const cases = runnable.flatMap((spec) => spec.cases(versions).map((c) => ({ spec, c })));
  const results: CaseResult[] = [];
  const warnings = new Map<string, Set<string>>();
  let done = 0;
  try {
    await pool(cases, opts.jobs, async ({ spec, c }) => {
      const { result, real, standin, problems: p } = await runCase(work, built.binaries.get(c.version)!, spec, c, api);
      results.push(result);
      problems.push(...p);
      for (const [side, r] of [["real", real], ["stand-in", standin]] as const) {
        for (const w of klogWarnings(r.stderr)) {
          const k = `${c.phase}, ${side}: ${w.replace(/\d{6,}/g, "N")}`;
          if (!warnings.has(k)) warnings.set(k, new Set());
          warnings.get(k)!.add(`${c.version}/${gateText(c.gate)}/${c.input.id}`);
        }
      }
      done++;
      if (done % 24 === 0 || done === cases.length) process.stderr.write(`fidelity: ${done}/${cases.length} cases\n`);
    });
  } finally {
    if (api) await api.stop();
    if (opts.keep) process.stderr.write(`fidelity: work folder kept: ${work}\n`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
  const order = (r: CaseResult): string => {
    const spec = PHASES.findIndex((p) => p.phase === r.case.phase);
    const input = PHASES[spec].inputs.findIndex((i) => i.id === r.case.input.id);
    return [spec, String(r.case.minor).padStart(3, "0"), GATES.indexOf(r.case.gate), String(input).padStart(2, "0")].join("|");
  };
  results.sort((a, b) => (order(a) < order(b) ? -1 : 1));

  // A known difference that shows nowhere is stale, judged on full runs only (all versions and phases).
  if (opts.versions.length === 0 && opts.phases.length === 0) {
    for (const k of KNOWN_DIFFERENCES.filter((k) => !results.some((r) => r.differences.some((d) => d.known.includes(k))))) {
      problems.push(`known.ts entry ${k.id} matches no difference any more: remove it`);
    }
  }

  const sections: string[] = [];
  const tables: string[] = [];
  for (const spec of runnable) {
    const mine = results.filter((r) => r.case.phase === spec.phase);
    const table = renderTable(mine, versions, spec.inputs.map((i) => i.id));
    tables.push(`${spec.title}\n\n${table}`);
    const fallback = [...new Set(mine.map((r) => r.standinCommand))].join(", ");
    sections.push(
      `## ${spec.title}\n\nStand-in command: ${fallback}.\n\n${table}\nInputs:\n\n${spec.inputs.map((i) => `- ${i.id}: ${i.title}`).join("\n")}\n`,
    );
  }
  const report = [
    `# Fidelity: real kubeadm against the lab's stand-in`,
    "",
    `Artifacts compared byte for byte: outcome (exit status and error text, klog lines left out), ${KUBELET_FILES.join(", ")} (content and mode), after an upgrade the Node's cri-socket annotation, and after upload-config the kubeadm-config ConfigMap's data.`,
    "",
    api ? `Upgrade and upload-config: real kubeadm against kube-apiserver ${api.versions.kubeApiserver} with etcd ${api.versions.etcd} (127.0.0.1, one API for all cases, which take turns).` : "No real API server ran (see the problems printed).",
    "",
    ...sections,
    "## Known differences",
    "",
    ...KNOWN_DIFFERENCES.map((k) => `- ${k.id} (${(k.phases ?? ["all phases"]).join(", ")}; 1.${k.minors[0]}-1.${k.minors[1]}; ${k.artifacts.join(", ")}): ${k.reason}`),
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

  process.stdout.write(`${tables.join("\n")}\n${differenceReport(results.filter((r) => r.differences.some((d) => d.unexplained.length > 0)))}`);
  for (const p of problems) process.stdout.write(`fidelity: PROBLEM: ${p}\n`);
  const { passed, failed } = counts(results);
  process.stdout.write(
    `fidelity: report (tables, every diff, warnings) in ${path.relative(process.cwd(), reportFile)}; build ${Math.round((tBuild - t0) / 1000)} s, ` +
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
