/**
 * One throwaway node for one command: a private mount namespace (and UTS namespace, for the
 * hostname) in which the lab's node folders are bind-mounted over the real paths, as the lab's nodes
 * have them (test/lab/nodes), and the lab's socket listener serves the runtime sockets. The command
 * runs there with /usr/local/sbin first on PATH, and exits; the files it wrote stay in the host folder.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureMountTargets } from "../lab/nodes/node";
import { NODE_MOUNTS } from "../lab/nodes/paths";

/** The lab's socket listener (listening unix sockets that accept and close). */
const LISTENER = path.join(__dirname, "..", "lab", "nodes", "listener.cjs");

/** What one namespaced run needs. */
export interface NamespaceRun {
  /** host folder whose subfolders (one per NODE_MOUNTS path) are bind-mounted over the node's paths */
  root: string;
  /** hostname inside the namespace */
  hostname: string;
  /** unix socket paths (inside the namespace) that listen while the command runs */
  sockets: string[];
  /** the command and its arguments, found on PATH inside the namespace */
  command: string[];
  /** extra environment */
  env?: Record<string, string>;
  /** kill the run after this long (default 120 s) */
  timeoutMs?: number;
}

/** How a namespaced command ended. */
export interface NamespaceResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The host path of a path inside the node (which must lie under one of NODE_MOUNTS). */
export function hostPath(root: string, nodePath: string): string {
  if (!NODE_MOUNTS.some((m) => nodePath === m || nodePath.startsWith(`${m}/`))) throw new Error(`${nodePath} is not under a node mount`);
  return path.join(root, nodePath);
}

/** Creates the host folder's mount sources (and the mount points on the host, as the lab does). */
export function prepareRoot(root: string): void {
  ensureMountTargets();
  for (const m of NODE_MOUNTS) fs.mkdirSync(path.join(root, m), { recursive: true });
}

/**
 * The script run by bash inside the namespace: bind mounts, hostname, the listener (waited for), then
 * the command with its exit code kept; the listener is stopped before bash exits. Exit 97 means the
 * node could not be set up (the command did not run).
 */
export const NAMESPACE_SCRIPT = `
set -uo pipefail
root=$1 host=$2 ready=$3 listener=$4 nsockets=$5
shift 5
sockets=("\${@:1:$nsockets}")
shift "$nsockets"
fail() { echo "fidelity namespace: $*" >&2; exit 97; }
for m in ${NODE_MOUNTS.join(" ")}; do mount --bind "$root$m" "$m" || fail "mount $m"; done
hostname "$host" || fail "hostname"
"$NODE_BIN" "$listener" "$ready" "\${sockets[@]}" &
lpid=$!
for _ in $(seq 1 400); do [ -e "$ready" ] && break; kill -0 "$lpid" 2>/dev/null || fail "listener exited"; sleep 0.025; done
[ -e "$ready" ] || fail "listener not ready"
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
code=$?
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
exit "$code"
`;

/** Runs one command in a fresh private mount + UTS namespace over `root` (see {@link NAMESPACE_SCRIPT}). */
export function runInNamespace(run: NamespaceRun): Promise<NamespaceResult> {
  const ready = path.join(run.root, "..", `listener-ready-${process.pid}-${Date.now()}`);
  const args = [
    "--mount",
    "--uts",
    "--propagation",
    "private",
    "--",
    "/bin/bash",
    "-c",
    NAMESPACE_SCRIPT,
    "fidelity-node",
    run.root,
    run.hostname,
    ready,
    LISTENER,
    String(run.sockets.length),
    ...run.sockets,
    ...run.command,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("unshare", args, {
      cwd: path.dirname(run.root),
      env: { ...process.env, ...run.env, NODE_BIN: process.execPath },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), run.timeoutMs ?? 120000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(ready, { force: true });
      if (code === 97) reject(new Error(`could not set up the namespace: ${stderr.trim()}`));
      else resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}
