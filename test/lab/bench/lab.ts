/**
 * The benchmark's own lab: `<repo>/.lab-bench`, nodes on 127.0.0.150-199, so it never meets the e2e
 * tests (`.lab-e2e*`, 127.0.0.110+ and 127.0.1.110+) or a developer's lab (`.lab`, 127.0.0.2+). Stack files go under
 * `.lab-bench/stacks/`; runs go through the real Pulumi CLI and engine (test/lab/engine).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { join } from "path";
import { parse, stringify } from "yaml";
import { REPO_ROOT, countSince, logOffsets, readStackFile, startLab, stopLab } from "../nodes";
import type { StandinLauncher } from "../nodes/wrappers";
import { labStack, projectName } from "../engine/stack";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import { LabRunResult, runStack } from "../engine/run";
import { pulumiPaths } from "../engine/paths";
import { LAB_INSTALLS } from "../e2e/helpers";

/** The bench lab's folder. */
export const LAB_DIR = join(REPO_ROOT, ".lab-bench");
/** The bench lab's first and last address (127.0.0.x). */
export const FIRST_ADDRESS = 150;
export const LAST_ADDRESS = 199;
/** Every bench node declares containerd. */
export const CONTAINERD = "unix:///run/containerd/containerd.sock";

/** The stand-in's step durations in seconds (the lab's config.json `durations`). */
export type Durations = Partial<Record<"init" | "join" | "upgradeApply" | "upgradeNode" | "drain" | "other", number>>;

/** The shape of a bench cluster. */
export interface BenchCluster {
  controlPlanes: number;
  workers: number;
}

/**
 * The address of the i-th node (from 0).
 * @throws Error past 127.0.0.199.
 */
export function addressOf(i: number): string {
  const x = FIRST_ADDRESS + i;
  if (i < 0 || x > LAST_ADDRESS) throw new Error(`bench lab: node ${i} would be 127.0.0.${x}, outside 127.0.0.${FIRST_ADDRESS}-${LAST_ADDRESS}`);
  return `127.0.0.${x}`;
}

/**
 * `c` as the bench lab can hold it: at most LAST_ADDRESS - FIRST_ADDRESS + 1 (50) nodes.
 * @throws Error naming `--workers`, the lab's size and the most workers it holds beside `c`'s control-plane nodes.
 */
export function fitsBenchLab(c: BenchCluster): BenchCluster {
  const room = LAST_ADDRESS - FIRST_ADDRESS + 1;
  if (c.controlPlanes + c.workers > room) {
    throw new Error(
      `--workers ${c.workers}: the bench lab holds ${room} nodes (127.0.0.${FIRST_ADDRESS}-${LAST_ADDRESS}), ${c.controlPlanes} of them control-plane: at most ${room - c.controlPlanes} workers`,
    );
  }
  return c;
}

/** `cp-1..cp-N`, then `worker-1..worker-M`. */
export function nodeNames(c: BenchCluster): string[] {
  return [
    ...Array.from({ length: c.controlPlanes }, (_, i) => `cp-${i + 1}`),
    ...Array.from({ length: c.workers }, (_, i) => `worker-${i + 1}`),
  ];
}

/** The control-plane nodes' names. */
export function controlPlaneNames(c: BenchCluster): string[] {
  return nodeNames(c).slice(0, c.controlPlanes);
}

/** The workers' names. */
export function workerNames(c: BenchCluster): string[] {
  return nodeNames(c).slice(c.controlPlanes);
}

/**
 * Writes `Pulumi.<name>.yaml` for the cluster at `version` (containerd declared on every node, the lab's
 * kubeadm and kubelet install commands, so no package repository is ever asked; no kubelet settle
 * window; component defaults otherwise) and returns its path.
 */
export function writeBenchStack(name: string, c: BenchCluster, version: string, extra: Record<string, unknown> = {}): string {
  const dir = join(LAB_DIR, "stacks");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `Pulumi.${name}.yaml`);
  const nodes = nodeNames(c).map((n, i) => ({ name: n, role: i < c.controlPlanes ? "control-plane" : "worker", host: addressOf(i), criSocket: CONTAINERD }));
  const config: Record<string, unknown> = {
    "kubeadm:kubernetesVersion": version,
    "kubeadm:controlPlaneEndpoint": `${addressOf(0)}:6443`,
    "kubeadm:clusterName": "bench",
    "kubeadm:kubernetesProvider": false,
    // The stand-in kubelet fails at once on a bad file: a settle window would only add a constant.
    "kubeadm:kubeletSettleSeconds": 0,
    ...LAB_INSTALLS,
    "kubeadm:nodes": nodes,
    "lab:nodes": Object.fromEntries(nodes.map((n) => [n.name, { runtimes: ["containerd"] }])),
    ...extra,
  };
  writeFileSync(file, stringify({ config }));
  return file;
}

/** The stack config keys whose defaults would reach a package repository (apt over the network). */
export const INSTALL_KEYS = ["kubeadm:kubeadmInstallCommand", "kubeadm:kubeletInstallCommand"] as const;

/**
 * Refuses a stack that would let the component run its default install commands (pkgs.k8s.io over the
 * network): the bench talks to nothing outside 127.0.0.0/8.
 * @throws Error naming the key that is unset or names a URL.
 */
export function assertLabInstalls(config: Record<string, unknown>): void {
  for (const k of INSTALL_KEYS) {
    const v = config[k];
    if (typeof v !== "string" || v.trim() === "" || v.includes("://")) {
      throw new Error(`bench: ${k} must be the lab's own install command (got ${JSON.stringify(v)}): the component's default would go to the network`);
    }
  }
}

/** Changes config keys of a stack file, as `pulumi config set` would. */
export function setStackConfig(file: string, values: Record<string, unknown>): void {
  const doc = parse(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  Object.assign(doc.config, values);
  writeFileSync(file, stringify(doc));
}

/** Starts a fresh bench lab for the stack (replacing any) with no stack state, and sets the stand-in's durations. */
export async function benchLabUp(stackFile: string, durations: Durations, standin: StandinLauncher): Promise<void> {
  await startLab({ spec: readStackFile(stackFile), labDir: LAB_DIR, ifRunning: "replace", standin });
  const p = pulumiPaths(LAB_DIR);
  for (const d of [p.state, p.project]) rmSync(d, { recursive: true, force: true });
  setDurations(durations);
}

/** Sets the stand-in's step durations (seconds); keys not given become 0. */
export function setDurations(d: Durations): void {
  const file = join(LAB_DIR, "config.json");
  const config = JSON.parse(readFileSync(file, "utf8")) as { durations?: Durations };
  config.durations = { init: 0, join: 0, upgradeApply: 0, upgradeNode: 0, drain: 0, other: 0, ...d };
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/** Stops the bench lab and removes `.lab-bench`. */
export async function benchLabDown(): Promise<void> {
  await stopLab({ labDir: LAB_DIR });
}

/** SSH connections each node's sshd accepted while `f` ran, from the nodes' own logs. */
export async function countingSessions<T>(nodes: string[], f: () => Promise<T>): Promise<{ value: T; sessions: Record<string, number> }> {
  const offsets = logOffsets(LAB_DIR, nodes);
  const value = await f();
  const counts = countSince(LAB_DIR, offsets);
  return { value, sessions: Object.fromEntries(nodes.map((n) => [n, counts[n]?.accepted ?? 0])) };
}

/**
 * The local backend's state file of the stack at `base` (`<dir>/<stack>`, no extension): `<base>.json`,
 * or `.json.gz` / `.json.zst` when the engine compresses it (`PULUMI_DIY_BACKEND_GZIP`, `_ZSTD`). When
 * several exist, the most recently modified, the later listed on a tie, as the engine picks it
 * (pkg/backend/diy/state.go `stackPath`).
 * @throws Error naming `base` when none of the three exists.
 */
export function stackStateFile(base: string): string {
  const found = ["", ".gz", ".zst"].map((ext) => `${base}.json${ext}`).filter((f) => existsSync(f));
  if (found.length === 0) throw new Error(`no state file ${base}.json, .json.gz or .json.zst`);
  return found.reduce((best, f) => (statSync(f).mtimeMs >= statSync(best).mtimeMs ? f : best));
}

/** One `pulumi up` of the bench stack on the real engine, timed. */
export interface BenchRun {
  /** Wall time of `pulumi up` alone (the Automation API call: CLI, engine, program, provider plugin), seconds. */
  wall_s: number;
  /** Per node, SSH connections its sshd accepted during the run. */
  sessions: Record<string, number>;
  /** Command resources the engine created, updated or replaced. */
  commands_run: number;
  /** When `pulumi up` was called (Unix seconds), to place the engine's step timestamps. */
  started_epoch_s: number;
  /**
   * The stack's state file after the run (the local backend's `.pulumi/stacks/<project>/<stack>.json`,
   * `.json.gz` or `.json.zst` with `PULUMI_DIY_BACKEND_GZIP` or `_ZSTD`: which the engine writes whole
   * after every resource operation), KB as written (compressed, when it is).
   */
  state_kb: number;
  engine: LabRunResult;
}

/**
 * `pulumi up` of the real root program (or of `program`, engineFloor.ts's) with this stack file on the
 * bench lab (`--parallel` when given, else the CLI's default). The stack selection and config writes before it are not timed (they are
 * `pulumi config set`, done once by a user).
 * @throws Error when the stack could reach a package repository (see {@link assertLabInstalls}); naming the failed resources and the CLI's message when the update fails.
 */
export async function benchUp(stackFile: string, c: BenchCluster, parallel?: number, program?: PulumiFn): Promise<BenchRun> {
  assertLabInstalls((parse(readFileSync(stackFile, "utf8")) as { config: Record<string, unknown> }).config);
  const lab = await labStack({ stackFile, labDir: LAB_DIR, ...(program !== undefined ? { program } : {}) });
  const started_epoch_s = Date.now() / 1000;
  const { value, sessions } = await countingSessions(nodeNames(c), async () => {
    const t0 = process.hrtime.bigint();
    const engine = await runStack(lab.stack, "up", { parallel });
    return { engine, wall: Number(process.hrtime.bigint() - t0) / 1e9 };
  });
  const { engine, wall } = value;
  if (!engine.ok) {
    const errors = engine.diagnostics.filter((d) => d.startsWith("error ")).slice(0, 5);
    throw new Error(`pulumi up of ${stackFile} failed: ${errors.join("; ") || engine.error}`);
  }
  const commands_run = engine.steps.filter((s) => s.type === "command:remote:Command" && s.done === true).length;
  const state_kb = Math.round(statSync(stackStateFile(join(pulumiPaths(LAB_DIR).state, ".pulumi", "stacks", projectName(), lab.stack.name))).size / 1024);
  return { wall_s: wall, sessions, commands_run, started_epoch_s, state_kb, engine };
}
