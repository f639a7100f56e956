/**
 * The benchmark's own lab: `<repo>/.lab-bench`, nodes on 127.0.0.150-199 (tests use `.lab`/`.lab-e2e`
 * and 127.0.0.2-130 at the same time). One stack file per scenario under `.lab-bench/stacks/`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "fs";
import { join } from "path";
import { parse, stringify } from "yaml";
import { REPO_ROOT, readStackFile, startLab, stopLab } from "../nodes";
import { runProgram } from "../runner/engine";
import type { RunResult } from "../runner/types";

export const LAB_DIR = join(REPO_ROOT, ".lab-bench");
export const FIRST_ADDRESS = 150;
export const LAST_ADDRESS = 199;
export const CONTAINERD = "unix:///run/containerd/containerd.sock";

export type Durations = Partial<Record<"init" | "join" | "upgradeApply" | "upgradeNode" | "drain" | "other", number>>;

export interface BenchCluster {
  controlPlanes: number;
  workers: number;
  version: string;
}

export function addressOf(i: number): string {
  const x = FIRST_ADDRESS + i;
  if (x > LAST_ADDRESS) throw new Error(`bench lab: node ${i} would be 127.0.0.${x}, outside 127.0.0.${FIRST_ADDRESS}-${LAST_ADDRESS}`);
  return `127.0.0.${x}`;
}

export function nodeNames(c: BenchCluster): string[] {
  return [
    ...Array.from({ length: c.controlPlanes }, (_, i) => `cp-${i + 1}`),
    ...Array.from({ length: c.workers }, (_, i) => `worker-${i + 1}`),
  ];
}

/** Write `Pulumi.<name>.yaml` for the cluster (containerd declared on every node; component defaults otherwise). */
export function writeBenchStack(name: string, c: BenchCluster, extra: Record<string, unknown> = {}): string {
  const dir = join(LAB_DIR, "stacks");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `Pulumi.${name}.yaml`);
  const nodes = nodeNames(c).map((n, i) => ({
    name: n,
    role: i < c.controlPlanes ? "control-plane" : "worker",
    host: addressOf(i),
    criSocket: CONTAINERD,
  }));
  const config: Record<string, unknown> = {
    "kubeadm:kubernetesVersion": c.version,
    "kubeadm:controlPlaneEndpoint": `${addressOf(0)}:6443`,
    "kubeadm:clusterName": "bench",
    // The stand-in kubelet fails at once on a bad file, so a settle window measures nothing here; the
    // default (10 s a node, on real machines) is reported apart in README's Performance section.
    "kubeadm:kubeletSettleSeconds": 0,
    // What a package upgrade does on a lab node.
    "kubeadm:installCommand": "echo v{version} >/etc/lab-node/kubeadm-version",
    "kubeadm:nodes": nodes,
    "lab:nodes": Object.fromEntries(nodes.map((n) => [n.name, { runtimes: ["containerd"] }])),
    ...extra,
  };
  writeFileSync(file, stringify({ config }));
  return file;
}

/** Change config keys of an existing stack file (what `pulumi config set` would do). */
export function setStackConfig(file: string, values: Record<string, unknown>): void {
  const doc = parse(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
  Object.assign(doc.config, values);
  writeFileSync(file, stringify(doc));
}

/** Start a fresh bench lab for the stack (replacing any), with no stack state. */
export async function benchLabUp(stackFile: string): Promise<void> {
  await startLab({ spec: readStackFile(stackFile), labDir: LAB_DIR, ifRunning: "replace" });
  rmSync(join(LAB_DIR, "state"), { recursive: true, force: true });
}

/** Set the stand-in's step durations (seconds); keys not given become 0. */
export function setDurations(d: Durations): void {
  const configPath = join(LAB_DIR, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { durations?: Durations };
  config.durations = { init: 0, join: 0, upgradeApply: 0, upgradeNode: 0, drain: 0, other: 0, ...d };
  writeFileSync(configPath, JSON.stringify(config, null, 2));
}

export async function benchLabDown(): Promise<void> {
  await stopLab({ labDir: LAB_DIR });
}

/** Run the real root program on the bench lab; progress lines go to `log`. */
export function benchRun(stackFile: string, mode: "apply" | "preview", log: (l: string) => void): Promise<RunResult> {
  return runProgram({ mode, stackFile, labDir: LAB_DIR, log });
}

/** Sum of the runner's per-host session counts. */
export function totalSessions(r: RunResult): number {
  return Object.values(r.sshSessions).reduce((a, b) => a + b, 0);
}
