/**
 * One lab node: a private mount namespace (held by the socket listener) with the node's folders
 * bind-mounted over the real paths, and Debian's sshd entered into that namespace with nsenter.
 * sshd can be stopped and started again on its own; the namespace and sockets stay.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { generateKey, opensshVersion, publicKeyLine } from "./keys";
import { NodeInfo, readNodeFile, writeNodeFile } from "./nodefile";
import { DEFAULT_LAB_DIR, NODE_MOUNTS, labPaths, nodePaths } from "./paths";
import { descendants, isAlive, mountNamespace, procStat, sleep, terminate } from "./procs";
import { NodeSpec, RUNTIME_SOCKETS } from "./spec";
import { renderSshdConfig } from "./sshd-config";
import { STANDIN_COMMANDS, StandinLauncher, renderWrapper, shq } from "./wrappers";

export const SSHD = "/usr/sbin/sshd";
const LISTENER = path.join(__dirname, "listener.cjs");
/** How long a node's listener and sshd may take to start: a guard against a hang, not a speed check (a busy 2-core machine runs two labs at once). */
const START_TIMEOUT_MS = 120000;

/**
 * Creates the node's folders and files: mounts' sources, version file, wrappers (running the stand-ins
 * with `launcher`), host key, sshd_config.
 */
export function prepareNodeFiles(labDir: string, spec: NodeSpec, version: string, launcher: StandinLauncher = "bundle"): void {
  const p = nodePaths(labDir, spec.name);
  for (const m of NODE_MOUNTS) fs.mkdirSync(path.join(p.root, m), { recursive: true });
  fs.mkdirSync(path.join(p.root, "run", "sshd"), { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(p.root, "etc", "lab-node", "kubeadm-version"), `${version}\n`);
  for (const cmd of STANDIN_COMMANDS) {
    fs.writeFileSync(path.join(p.root, "usr", "local", "sbin", cmd), renderWrapper(cmd, labDir, spec.name, { launcher, hostname: spec.hostname }), { mode: 0o755 });
  }
  generateKey(p.hostKey, `lab-node-${spec.name}`);
  const config = renderSshdConfig({
    address: spec.address,
    port: spec.port,
    hostKeyFile: p.hostKey,
    authorizedKeysFile: `${labPaths(labDir).clientKey}.pub`,
    opensshVersion: opensshVersion(),
  });
  fs.writeFileSync(p.sshdConfig, config);
}

/** The mount points must exist on the host's filesystem (they stay, empty, after the lab is gone). */
export function ensureMountTargets(): void {
  for (const m of NODE_MOUNTS) fs.mkdirSync(m, { recursive: true });
}

function tail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

function spawnDetached(cmd: string, args: string[], logFile: string): number {
  const log = fs.openSync(logFile, "a");
  try {
    const child = spawn(cmd, args, { detached: true, stdio: ["ignore", log, log] });
    child.on("error", () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`cannot start ${cmd}`);
    return child.pid;
  } finally {
    fs.closeSync(log);
  }
}

/** Starts the namespace holder (mounts, then exec the socket listener); resolves when the sockets listen. */
async function startHolder(labDir: string, spec: NodeSpec): Promise<number> {
  const p = nodePaths(labDir, spec.name);
  fs.rmSync(p.listenerReady, { force: true });
  const mounts = NODE_MOUNTS.map((m) => `mount --bind ${shq(path.join(p.root, m))} ${shq(m)}`);
  const sockets = spec.runtimes.map((r) => shq(RUNTIME_SOCKETS[r]));
  const script = [
    "set -e",
    ...mounts,
    `exec ${shq(process.execPath)} ${shq(LISTENER)} ${shq(p.listenerReady)} ${sockets.join(" ")}`,
  ].join("\n");
  // unshare execs bash, which execs node: one pid for the holder's whole life.
  const pid = spawnDetached("unshare", ["--mount", "--propagation", "private", "--", "/bin/bash", "-c", script], p.listenerLog);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!fs.existsSync(p.listenerReady)) {
    if (!isAlive(pid)) throw new Error(`node ${spec.name}: namespace/socket listener exited:\n${tail(p.listenerLog)}`);
    if (Date.now() > deadline) throw new Error(`node ${spec.name}: socket listener not ready after ${START_TIMEOUT_MS} ms`);
    await sleep(10);
  }
  return pid;
}

/** Resolves true when something at address:port answers with an SSH banner. */
export function sshBanner(address: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: address, port });
    let data = "";
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.on("error", () => done(false));
    sock.on("data", (b) => {
      data += b.toString("latin1");
      if (data.includes("\n")) done(data.startsWith("SSH-2.0-"));
    });
    sock.on("end", () => done(false));
  });
}

/** Resolves true when address:port accepts a TCP connection. */
export function portTaken(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: address, port });
    sock.setTimeout(1000, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.on("error", () => resolve(false));
  });
}

/** Starts sshd inside the holder's namespace; resolves with its pid when it answers. */
async function startSshdIn(labDir: string, spec: NodeSpec, holderPid: number): Promise<number> {
  const p = nodePaths(labDir, spec.name);
  if (!fs.existsSync(SSHD)) throw new Error(`${SSHD} is missing: run .ci/install-lab.sh (Debian's openssh-server)`);
  if (await portTaken(spec.address, spec.port)) {
    throw new Error(`node ${spec.name}: ${spec.address}:${spec.port} is already in use (another lab, or a system sshd on 0.0.0.0:${spec.port}?)`);
  }
  // nsenter execs sshd (no --fork for a mount namespace): the pid is sshd's.
  const pid = spawnDetached("nsenter", ["--target", String(holderPid), "--mount", "--", SSHD, "-D", "-f", p.sshdConfig, "-E", p.sshdLog], p.sshdLog);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await sshBanner(spec.address, spec.port))) {
    if (!isAlive(pid)) throw new Error(`node ${spec.name}: sshd exited:\n${tail(p.sshdLog)}`);
    if (Date.now() > deadline) throw new Error(`node ${spec.name}: sshd not answering on ${spec.address}:${spec.port} after ${START_TIMEOUT_MS} ms`);
    await sleep(10);
  }
  return pid;
}

function startTimeOf(pid: number): number {
  const st = procStat(pid);
  if (!st) throw new Error(`process ${pid} vanished`);
  return st.startTime;
}

/**
 * Starts one node whose files prepareNodeFiles made. node.json is written as soon as each process
 * exists, so a crash midway leaves pids the next `up` can clean.
 */
export async function startNode(labDir: string, spec: NodeSpec, version: string): Promise<NodeInfo> {
  const p = nodePaths(labDir, spec.name);
  const holderPid = await startHolder(labDir, spec);
  const ns = mountNamespace(holderPid);
  if (!ns || ns === mountNamespace(process.pid)) throw new Error(`node ${spec.name}: the holder is not in a namespace of its own`);
  const info: NodeInfo = {
    name: spec.name,
    address: spec.address,
    port: spec.port,
    runtimes: spec.runtimes,
    hostKey: publicKeyLine(p.hostKey),
    pids: [holderPid],
    holderPid,
    sshdPid: null,
    startTimes: { [holderPid]: startTimeOf(holderPid) },
    mountNamespace: ns,
    root: p.root,
    version,
  };
  writeNodeFile(labDir, info);
  const sshdPid = await startSshdIn(labDir, spec, holderPid);
  return recordSshd(labDir, info, sshdPid);
}

function recordSshd(labDir: string, info: NodeInfo, sshdPid: number | null): NodeInfo {
  const startTimes: Record<string, number> = { [info.holderPid]: info.startTimes[info.holderPid] as number };
  if (sshdPid !== null) startTimes[sshdPid] = startTimeOf(sshdPid);
  const next: NodeInfo = {
    ...info,
    sshdPid,
    pids: sshdPid === null ? [info.holderPid] : [info.holderPid, sshdPid],
    startTimes,
  };
  writeNodeFile(labDir, next);
  return next;
}

/** Whether a recorded pid is still the process the lab started. */
export function isOurs(info: NodeInfo, pid: number | null): boolean {
  return pid !== null && isAlive(pid, info.startTimes[pid]);
}

export interface StopSshdOptions {
  labDir?: string;
  /** also end the node's open SSH sessions and what runs in them (default true: the node drops off) */
  sessions?: boolean;
  /** default SIGKILL, as a crash */
  signal?: NodeJS.Signals;
  /**
   * With the sessions, also what they started in a session of its own (`setsid`: kubeadm under
   * pk_run_once), as the machine's crash would; default true. False: as a lost connection does, which
   * ends a session's processes but not what detached from it.
   */
  detached?: boolean;
}

/** An sshd process: `sshd` itself, or from OpenSSH 9.8 on the per-connection `sshd-session` (and `sshd-auth`). */
function isSshd(comm: string | undefined): boolean {
  return comm !== undefined && comm.startsWith("sshd");
}

/**
 * Whether a process runs in a session that one of sshd's sessions started of its own (`setsid`): the
 * session's leader is not an sshd process's child (an SSH session's shell is) and not sshd itself.
 */
function detachedFromSsh(pid: number): boolean {
  const st = procStat(pid);
  if (st === undefined) return false;
  const leader = procStat(st.sid);
  if (leader === undefined || isSshd(leader.comm)) return false;
  return !isSshd(procStat(leader.ppid)?.comm);
}

/** Stops one node's sshd (and by default its sessions); the namespace and sockets stay. */
export async function stopNodeSshd(name: string, opts: StopSshdOptions = {}): Promise<NodeInfo> {
  const labDir = path.resolve(opts.labDir ?? DEFAULT_LAB_DIR);
  const info = readNodeFile(labDir, name);
  if (isOurs(info, info.sshdPid)) {
    const pid = info.sshdPid as number;
    const all = opts.sessions === false ? [] : descendants([pid]);
    const victims = [pid, ...(opts.detached === false ? all.filter((p) => !detachedFromSsh(p)) : all)];
    await terminate(victims, 1500, opts.signal ?? "SIGKILL");
  }
  return recordSshd(labDir, info, null);
}

/** Starts one node's sshd again in the node's namespace (no-op when it runs). */
export async function startNodeSshd(name: string, opts: { labDir?: string } = {}): Promise<NodeInfo> {
  const labDir = path.resolve(opts.labDir ?? DEFAULT_LAB_DIR);
  const info = readNodeFile(labDir, name);
  if (!isOurs(info, info.holderPid)) throw new Error(`node ${name}: its namespace is gone (holder ${info.holderPid}); run up again`);
  if (isOurs(info, info.sshdPid)) return info;
  const pid = await startSshdIn(labDir, info, info.holderPid);
  return recordSshd(labDir, info, pid);
}
