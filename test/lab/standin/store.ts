/**
 * TEST DOUBLE, not a Kubernetes API server: the lab's shared cluster store.
 *
 * Layout: `$LAB_DIR/cluster/store.json` (one JSON document, below) and `$LAB_DIR/cluster/store.lock`.
 * Every read-modify-write holds an exclusive `flock` on store.lock and replaces store.json atomically
 * (temp file + rename), so concurrent stand-ins on several nodes lose nothing. A read takes no lock: it
 * sees the whole store as one write or the next left it, and many read at once, as an API server serves
 * concurrent GETs (an exclusive lock for reads queued the 23 nodes' version checks of an upgrade one
 * behind the other).
 */
import * as fs from "fs";
import * as path from "path";
import { clockMs, labDir } from "./common";
import { withFlock } from "./lock";

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface NodeObject {
  apiVersion: "v1";
  kind: "Node";
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    creationTimestamp: string;
    resourceVersion: string;
  };
  spec: { taints?: Taint[]; unschedulable?: boolean };
  status: {
    conditions: { type: string; status: string; reason: string; message: string; lastHeartbeatTime: string }[];
    nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string; operatingSystem: string; architecture: string };
  };
}

export interface ConfigMapObject {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  data: Record<string, string>;
}

export interface Store {
  /** etcd-like global revision; every object write takes the next one as its resourceVersion. */
  revision: number;
  nodes: Record<string, NodeObject>;
  /** Keyed `<namespace>/<name>`. */
  configMaps: Record<string, ConfigMapObject>;
  /** Bootstrap tokens `<id>.<secret>`, expiry in ms since epoch (null = never). */
  tokens: { id: string; secret: string; expires: number | null }[];
  /** The `kubeadm-certs` Secret: the key that encrypts it and its expiry (ms since epoch). */
  certs?: { key: string; expires: number };
  /** The cluster CA (PEM) and kubeadm's hash of its public key (`sha256:<hex>`). */
  ca?: { cert: string; key: string; hash: string };
  /** The API endpoint join commands print (`host:port`). */
  apiEndpoint?: string;
  /** The node `kubeadm init` ran on (the lab has one cluster store, so one cluster). */
  initNode?: string;
  /** Lab control: nodes whose drain fails as if a PodDisruptionBudget blocked an eviction. */
  drainBlocks: Record<string, string>;
}

function emptyStore(): Store {
  return { revision: 1, nodes: {}, configMaps: {}, tokens: [], drainBlocks: {} };
}

export function storeDir(): string {
  return path.join(labDir(), "cluster");
}

function storeFile(): string {
  return path.join(storeDir(), "store.json");
}

function load(): Store {
  try {
    return { ...emptyStore(), ...(JSON.parse(fs.readFileSync(storeFile(), "utf8")) as Store) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return emptyStore();
    throw e;
  }
}

/** Reads the store as the last write left it (no lock: writes replace the file atomically). */
export async function readStore(): Promise<Store> {
  return load();
}

/**
 * Read-modify-write under the exclusive lock. `fn` mutates the store it is given; the store is
 * written back only when `fn` returns without throwing.
 */
export async function updateStore<T>(fn: (s: Store) => T | Promise<T>): Promise<T> {
  return withFlock(path.join(storeDir(), "store.lock"), async () => {
    const s = load();
    const result = await fn(s);
    const tmp = `${storeFile()}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify(s, null, 2));
    fs.renameSync(tmp, storeFile());
    return result;
  });
}

/** Takes the next revision, as the API server does on every write. */
export function nextRevision(s: Store): string {
  s.revision += 1;
  return String(s.revision);
}

export function now(): string {
  return new Date(clockMs()).toISOString().replace(/\.\d+Z$/, "Z");
}

export const CRI_SOCKET_ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket";

export function kubeadmConfig(s: Store): ConfigMapObject | undefined {
  return s.configMaps["kube-system/kubeadm-config"];
}

/** Lab helper: make (reason) or stop making (undefined) a node's drain fail like a blocking PDB. */
export async function setDrainBlock(node: string, reason: string | undefined): Promise<void> {
  await updateStore((s) => {
    if (reason === undefined) delete s.drainBlocks[node];
    else s.drainBlocks[node] = reason;
  });
}
