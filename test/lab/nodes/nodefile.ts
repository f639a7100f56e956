/** node.json: what the lab knows about one running node (the contract in test/lab/README.md). */
import * as fs from "node:fs";
import * as path from "node:path";
import { nodePaths } from "./paths";
import { Runtime } from "./spec";

export interface NodeInfo {
  name: string;
  address: string;
  port: number;
  runtimes: Runtime[];
  /** `ssh-ed25519 AAAA...` for `connection.hostKey` */
  hostKey: string;
  /** every process the lab started for this node that is running: [holderPid, sshdPid] */
  pids: number[];
  /** the socket listener, which holds the node's mount namespace */
  holderPid: number;
  /** the node's sshd (listening process), or null while it is stopped */
  sshdPid: number | null;
  /** pid -> start time (clock ticks since boot, /proc/<pid>/stat): tells our process from a reused pid */
  startTimes: Record<string, number>;
  /** `mnt:[...]` of the node's private mount namespace */
  mountNamespace: string;
  /** host folder holding the node's bind-mounted paths */
  root: string;
  /** the kubeadm version the node was started with (the node's current one is /etc/lab-node/kubeadm-version) */
  version: string;
}

export function readNodeFile(labDir: string, name: string): NodeInfo {
  return JSON.parse(fs.readFileSync(nodePaths(labDir, name).nodeJson, "utf8")) as NodeInfo;
}

/** Writes node.json atomically (temp file + rename). */
export function writeNodeFile(labDir: string, info: NodeInfo): void {
  const file = nodePaths(labDir, info.name).nodeJson;
  const tmp = path.join(path.dirname(file), `.node.json.${process.pid}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(info, null, 2) + "\n");
  fs.renameSync(tmp, file);
}

/** node.json of every node folder that has one, sorted by address then name. */
export function readAllNodeFiles(labDir: string): NodeInfo[] {
  const dir = path.join(labDir, "nodes");
  if (!fs.existsSync(dir)) return [];
  const out: NodeInfo[] = [];
  for (const name of fs.readdirSync(dir)) {
    try {
      out.push(readNodeFile(labDir, name));
    } catch {
      /* a node whose start never got this far: leftovers are found by the cleanup's /proc scan */
    }
  }
  const key = (n: NodeInfo) => n.address.split(".").map((x) => x.padStart(3, "0")).join(".") + ":" + n.name;
  return out.sort((a, b) => key(a).localeCompare(key(b)));
}
