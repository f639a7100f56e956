/**
 * Scenario `upgrade`: the provisioned cluster one minor up, with `maxUnavailableWorkers` 1 and 5 (one
 * entry each, each from a freshly provisioned cluster at the provision version), stand-in durations
 * upgrade apply 3 s, upgrade node 2 s, drain 1 s.
 *
 * Upgrades are issue 4, being built. Before timing anything, a preview of the upgraded stack against
 * the provisioned state tells whether the component upgrades at all (some `*upgrade*` step would
 * run); if not, the entry is `{ skipped: "<reason>" }`, never made-up figures.
 *
 * The new kubeadm/kubelet version is put on every node beforehand, untimed (as a package install
 * would; the lab's `/etc/lab-node/kubeadm-version`), because the bound leaves installs out. If the
 * component's install step needs lab-specific config, give it as JSON in BENCH_UPGRADE_CONFIG (stack
 * config keys -> values); `{version}` in a string value is replaced by the target version.
 */
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import { basename, dirname, join } from "path";
import { REPO_ROOT, hostPathOf } from "../nodes";
import { benchRun, nodeNames, setDurations, setStackConfig, LAB_DIR } from "./lab";
import { ratio, round, upgradeBound } from "./bounds";
import { timedApply } from "./apply";
import { CLUSTER } from "./cluster";
import { kindOf, stepFigures, type StepFigures } from "./steps";
import { stateDependencies } from "./critical";

export const UPGRADE_DURATIONS = { upgradeApply: 3, upgradeNode: 2, drain: 1 };
export const MAX_UNAVAILABLE = [1, 5];

export interface UpgradeEntry {
  max_unavailable_workers: number;
  wall_s: number;
  bound_s: number;
  ratio: number;
  /** From the stand-in's events.log: `upgrade apply` and `upgrade node` runs (expect 1 and nodes-1). */
  kubeadm_runs: Record<string, number>;
  steps: StepFigures;
  timeline: string;
}

export type UpgradeFigures = { skipped: string } | { entries: UpgradeEntry[] };

/** One minor up: v1.33.2 -> v1.34.0 (patch .0 exists for every minor). */
export function nextMinor(version: string): string {
  const m = /^v?(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new Error(`version ${version}`);
  return `v${m[1]}.${Number(m[2]) + 1}.0`;
}

function extraConfig(target: string): Record<string, unknown> {
  const raw = process.env.BENCH_UPGRADE_CONFIG;
  if (!raw) return {};
  const parsed = JSON.parse(raw) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v === "string" ? v.split("{version}").join(target) : v]));
}

/** What the upgraded stack sets. */
export function upgradeConfig(target: string, maxUnavailable: number): Record<string, unknown> {
  return { "kubeadm:kubernetesVersion": target, "kubeadm:maxUnavailableWorkers": maxUnavailable, ...extraConfig(target) };
}

/**
 * Why the component cannot be benchmarked for upgrades yet, or undefined when it can: the root program
 * must read `maxUnavailableWorkers`, and a preview of the upgraded stack must run an upgrade step.
 * Changes nothing (a preview writes no state).
 */
export async function upgradeUnsupported(stackFile: string, target: string): Promise<string | undefined> {
  const program = readFileSync(join(REPO_ROOT, "index.ts"), "utf8");
  const reasons: string[] = [];
  if (!program.includes("maxUnavailableWorkers")) reasons.push("index.ts does not read kubeadm:maxUnavailableWorkers");
  // A copy of the stack file with the same stack name (so the preview reads the provisioned state).
  const probeDir = join(dirname(stackFile), "upgrade-probe");
  mkdirSync(probeDir, { recursive: true });
  const probe = join(probeDir, basename(stackFile));
  writeFileSync(probe, readFileSync(stackFile));
  setStackConfig(probe, upgradeConfig(target, 1));
  const preview = await benchRun(probe, "preview", () => undefined);
  const upgrades = preview.resources.filter((r) => /upgrade/.test(kindOf(r.name)) && r.op !== "same");
  if (!preview.ok) reasons.push(`a preview of ${target} fails: ${[...preview.errors, ...preview.resources.filter((r) => !r.ok).map((r) => r.error)].join("; ")}`);
  else if (upgrades.length === 0) {
    const changed = preview.resources.filter((r) => r.op !== "same" && r.type === "command:remote:Command");
    const kinds = [...new Set(changed.map((r) => kindOf(r.name)))];
    reasons.push(
      `the component registers no upgrade step: a preview of ${target} against the provisioned state would ` +
        (changed.length === 0 ? "change nothing" : `${changed.map((r) => r.op).filter((v, i, a) => a.indexOf(v) === i).join("/")} ${changed.length} command(s) (${kinds.join(", ")})`) +
        " and run no kubeadm upgrade (issue 4 not merged yet)",
    );
  }
  return reasons.length > 0 ? reasons.join("; ") : undefined;
}

/** Put `version` on every node, as the package install would (untimed). */
export function installVersion(version: string): void {
  for (const n of nodeNames(CLUSTER)) writeFileSync(hostPathOf(LAB_DIR, n, "/etc/lab-node/kubeadm-version"), `${version}\n`);
}

function kubeadmRuns(since: number): Record<string, number> {
  const lines = readFileSync(join(LAB_DIR, "cluster", "events.log"), "utf8").split("\n").slice(since).filter(Boolean);
  const out: Record<string, number> = {};
  for (const l of lines) {
    const cmd = l.split(" ").slice(3).join(" ");
    out[cmd] = (out[cmd] ?? 0) + 1;
  }
  return out;
}

function eventCount(): number {
  try {
    return readFileSync(join(LAB_DIR, "cluster", "events.log"), "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

/**
 * Upgrade the provisioned cluster in `stackFile` to `target` with `maxUnavailableWorkers` = k, and time
 * the apply. The scenario function the benchmark calls once per k, each on a freshly provisioned cluster.
 */
export async function upgradeCluster(stackFile: string, target: string, k: number, say: (l: string) => void): Promise<UpgradeEntry> {
  setDurations(UPGRADE_DURATIONS);
  installVersion(target);
  setStackConfig(stackFile, upgradeConfig(target, k));
  const before = eventCount();
  say(`upgrade: ${target}, maxUnavailableWorkers ${k}`);
  const { result, wall, tl, timeline } = await timedApply(stackFile, `upgrade-${k}`, say);
  const bound = upgradeBound(CLUSTER, UPGRADE_DURATIONS, k);
  return {
    max_unavailable_workers: k,
    wall_s: round(wall),
    bound_s: bound,
    ratio: ratio(wall, bound),
    kubeadm_runs: kubeadmRuns(before),
    steps: stepFigures(result, tl, stateDependencies(join(LAB_DIR, "state", `${basename(stackFile, ".yaml").replace(/^Pulumi\./, "")}.json`))),
    timeline,
  };
}
