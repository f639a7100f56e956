/** Where the lab keeps its files on the host. Everything is derived from one lab directory. */
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The repository root: the nearest folder above this file (test/lab/nodes/paths.ts) that holds
 * Pulumi.yaml, so the e2e tests' transpiled copy of the lab (`.lab-build/<worker>/test/lab/nodes/`,
 * e2e/labBuild.ts) finds the repository too.
 */
export const REPO_ROOT = (() => {
  for (let dir = path.resolve(__dirname, "..", "..", ".."); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "Pulumi.yaml"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(__dirname, "..", "..", "..");
  }
})();

/** The default lab directory: `<repo>/.lab` (git-ignored). */
export const DEFAULT_LAB_DIR = path.join(REPO_ROOT, ".lab");

/** Paths inside a node that are bind-mounted from `.lab/nodes/<name>/root/<path>`. */
export const NODE_MOUNTS = [
  "/etc/kubernetes",
  "/var/lib/kubelet",
  "/var/lib/etcd",
  "/var/lib/pulumi-kubeadm",
  "/run",
  "/usr/local/sbin",
  "/etc/lab-node",
  // Each machine has its own root home: without this, sessions would run the host's ~/.bashrc (bash
  // reads it when started by sshd), share its locks and state, and be slower.
  "/root",
] as const;

export interface LabPaths {
  labDir: string;
  configFile: string;
  sshDir: string;
  clientKey: string;
  knownHosts: string;
  clusterDir: string;
  nodesDir: string;
  /**
   * The lab's Pulumi files (test/lab/engine): `home/` (PULUMI_HOME: plugins), `state/` (the local
   * backend) and `project/` (Pulumi.yaml and stack settings). State and project belong to the
   * machines: a fresh lab has no stack.
   */
  pulumiDir: string;
}

export function labPaths(labDir: string = DEFAULT_LAB_DIR): LabPaths {
  const dir = path.resolve(labDir);
  const sshDir = path.join(dir, "ssh");
  return {
    labDir: dir,
    configFile: path.join(dir, "config.json"),
    sshDir,
    clientKey: path.join(sshDir, "id_ed25519"),
    knownHosts: path.join(sshDir, "known_hosts"),
    clusterDir: path.join(dir, "cluster"),
    nodesDir: path.join(dir, "nodes"),
    pulumiDir: path.join(dir, "pulumi"),
  };
}

export interface NodePaths {
  dir: string;
  /** host directory whose subfolders are mounted over the node's paths */
  root: string;
  nodeJson: string;
  sshdConfig: string;
  sshdLog: string;
  hostKey: string;
  listenerLog: string;
  listenerReady: string;
}

export function nodePaths(labDir: string, name: string): NodePaths {
  const dir = path.join(labPaths(labDir).nodesDir, name);
  return {
    dir,
    root: path.join(dir, "root"),
    nodeJson: path.join(dir, "node.json"),
    sshdConfig: path.join(dir, "sshd_config"),
    sshdLog: path.join(dir, "sshd.log"),
    hostKey: path.join(dir, "ssh_host_ed25519_key"),
    listenerLog: path.join(dir, "listener.log"),
    listenerReady: path.join(dir, "listener.ready"),
  };
}

/** Host path of a path inside the node (only for paths under NODE_MOUNTS). */
export function hostPathOf(labDir: string, name: string, nodePath: string): string {
  const mount = NODE_MOUNTS.find((m) => nodePath === m || nodePath.startsWith(m + "/"));
  if (!mount) throw new Error(`${nodePath} is not under a node mount (${NODE_MOUNTS.join(", ")})`);
  return path.join(nodePaths(labDir, name).root, nodePath);
}
