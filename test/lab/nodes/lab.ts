/**
 * The whole lab: start N nodes (cleaning a crashed lab's leftovers first, or reusing a running one),
 * stop every process the lab started, and list the nodes.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { generateKey } from "./keys";
import { NodeInfo, readAllNodeFiles } from "./nodefile";
import { ensureMountTargets, isOurs, prepareNodeFiles, startNode } from "./node";
import { DEFAULT_LAB_DIR, labPaths } from "./paths";
import { allPids, cmdline, descendants, isAlive, processesInNamespace, terminate } from "./procs";
import { LabSpec, validateSpec } from "./spec";
import { writeKnownHosts } from "./ssh";
import { buildStandins } from "./standinBundle";
import type { StandinLauncher } from "./wrappers";

export const DEFAULT_CONFIG = {
  tokenTtlSeconds: 86400,
  certificateKeyTtlSeconds: 7200,
  clockOffsetSeconds: 0,
  durations: { init: 0, join: 0, upgradeApply: 0, upgradeNode: 0, drain: 0, other: 0 },
};

export interface LabInfo {
  labDir: string;
  version: string;
  nodes: NodeInfo[];
  /** the lab's SSH client key (private) */
  clientKey: string;
  /** known_hosts for every node */
  knownHosts: string;
  /** true when a running lab with the same nodes was reused */
  reused: boolean;
}

export interface StartLabOptions {
  spec: LabSpec;
  labDir?: string;
  /** a lab already running here: reuse it when it has the same nodes (default), replace it, or fail */
  ifRunning?: "reuse" | "replace" | "fail";
  /** nodes started at once (default 6) */
  parallel?: number;
  /**
   * how the nodes run the stand-ins: `bundle` (default; built into `<lab>/standin/` on every start,
   * reuse included, so an edited stand-in takes effect at the next `up`) or `tsx` (the sources)
   */
  standin?: StandinLauncher;
}

function sameNodes(spec: LabSpec, running: NodeInfo[]): boolean {
  if (spec.nodes.length !== running.length) return false;
  return spec.nodes.every((n) => {
    const r = running.find((x) => x.name === n.name);
    return !!r && r.address === n.address && r.port === n.port && r.version === spec.version &&
      [...r.runtimes].sort().join() === [...n.runtimes].sort().join();
  });
}

function describe(nodes: NodeInfo[]): string {
  return nodes.map((n) => `${n.name} ${n.address}:${n.port}`).join(", ");
}

/** Nodes whose holder and sshd are both the processes the lab started. */
export function healthyNodes(nodes: NodeInfo[]): NodeInfo[] {
  return nodes.filter((n) => isOurs(n, n.holderPid) && isOurs(n, n.sshdPid));
}

export async function startLab(opts: StartLabOptions): Promise<LabInfo> {
  const spec = validateSpec(opts.spec);
  const labDir = path.resolve(opts.labDir ?? DEFAULT_LAB_DIR);
  const paths = labPaths(labDir);
  const existing = readAllNodeFiles(labDir);
  const live = existing.filter((n) => isOurs(n, n.holderPid) || isOurs(n, n.sshdPid));
  if (live.length > 0) {
    const mode = opts.ifRunning ?? "reuse";
    const healthy = healthyNodes(existing);
    if (mode === "reuse" && healthy.length === existing.length && sameNodes(spec, existing)) {
      buildStandins(labDir);
      writeKnownHosts(labDir, existing);
      return { labDir, version: spec.version, nodes: existing, clientKey: paths.clientKey, knownHosts: paths.knownHosts, reused: true };
    }
    if (mode !== "replace") {
      const why = healthy.length !== existing.length ? "some of its nodes are down" : "its nodes differ from the ones asked for";
      throw new Error(`a lab is already running in ${labDir} (${describe(existing)}) and ${why}: run \`npm run lab -- down\` first, or \`up --fresh\``);
    }
  }
  await cleanLab(labDir);

  fs.mkdirSync(paths.clusterDir, { recursive: true });
  fs.mkdirSync(paths.nodesDir, { recursive: true });
  if (!fs.existsSync(paths.configFile)) fs.writeFileSync(paths.configFile, JSON.stringify(DEFAULT_CONFIG, null, 2) + "\n");
  generateKey(paths.clientKey, "lab");
  ensureMountTargets();
  const launcher = opts.standin ?? "bundle";
  if (launcher === "bundle") buildStandins(labDir);
  for (const n of spec.nodes) prepareNodeFiles(labDir, n, spec.version, launcher);

  const nodes: NodeInfo[] = [];
  const queue = [...spec.nodes];
  const errors: Error[] = [];
  const worker = async () => {
    for (let n = queue.shift(); n && errors.length === 0; n = queue.shift()) {
      try {
        nodes.push(await startNode(labDir, n, spec.version));
      } catch (e) {
        errors.push(e instanceof Error ? e : new Error(String(e)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.parallel ?? 6) }, worker));
  if (errors.length > 0) {
    await killLabProcesses(labDir);
    throw errors[0];
  }
  const ordered = spec.nodes.map((s) => nodes.find((n) => n.name === s.name) as NodeInfo);
  writeKnownHosts(labDir, ordered);
  return { labDir, version: spec.version, nodes: ordered, clientKey: paths.clientKey, knownHosts: paths.knownHosts, reused: false };
}

/**
 * Every live process of this lab: recorded pids that are still ours, their descendants (SSH
 * sessions), everything in their mount namespaces, and, as a net for a crash before node.json was
 * written, any process whose command line names this lab's nodes folder.
 */
export function labProcesses(labDir: string): number[] {
  const found = new Set<number>();
  for (const n of readAllNodeFiles(labDir)) {
    const ours = n.pids.filter((p) => isOurs(n, p));
    for (const p of ours) found.add(p);
    for (const p of descendants(ours)) found.add(p);
    if (ours.length > 0) for (const p of processesInNamespace(n.mountNamespace)) found.add(p);
  }
  const marker = path.join(path.resolve(labDir), "nodes") + "/";
  for (const p of allPids()) {
    if (p !== process.pid && !found.has(p) && isAlive(p) && cmdline(p).includes(marker)) {
      found.add(p);
      for (const d of descendants([p])) found.add(d);
    }
  }
  return [...found];
}

async function killLabProcesses(labDir: string): Promise<number[]> {
  return terminate(labProcesses(labDir));
}

/** Host mounts under the lab folder (none by design: node mounts live in private namespaces). */
function unmountLeftovers(labDir: string): void {
  const prefix = path.resolve(labDir) + "/";
  const lines = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  const points = lines
    .map((l) => l.split(" ")[4] ?? "")
    .map((m) => m.replace(/\\040/g, " "))
    .filter((m) => m.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const m of points) {
    // lazy: a leftover mount must not keep a new lab from starting
    execFileSync("umount", ["-l", m], { stdio: "ignore" });
  }
}

/** Kills leftovers, unmounts, removes the lab's files except config.json. */
async function cleanLab(labDir: string): Promise<void> {
  await killLabProcesses(labDir);
  unmountLeftovers(labDir);
  const paths = labPaths(labDir);
  for (const d of [paths.nodesDir, paths.clusterDir, paths.sshDir]) fs.rmSync(d, { recursive: true, force: true });
  // New machines hold no cluster, so no stack state either (the plugins in pulumi/home stay).
  for (const d of ["state", "project"]) fs.rmSync(path.join(paths.pulumiDir, d), { recursive: true, force: true });
}

export interface StopLabResult {
  /** the pids that were signalled */
  stopped: number[];
}

/** Stops exactly the lab's processes and removes the lab folder. */
export async function stopLab(opts: { labDir?: string } = {}): Promise<StopLabResult> {
  const labDir = path.resolve(opts.labDir ?? DEFAULT_LAB_DIR);
  const stopped = await killLabProcesses(labDir);
  const again = labProcesses(labDir);
  if (again.length > 0) throw new Error(`lab processes still running after stop: ${again.join(" ")}`);
  unmountLeftovers(labDir);
  fs.rmSync(labDir, { recursive: true, force: true });
  return { stopped };
}

/** The running lab's nodes (node.json of each), in address order. */
export function readLab(opts: { labDir?: string } = {}): NodeInfo[] {
  return readAllNodeFiles(path.resolve(opts.labDir ?? DEFAULT_LAB_DIR));
}
