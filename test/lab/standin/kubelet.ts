/**
 * TEST DOUBLE, not a real kubelet: the stand-in kubelet's start-up checks and its state in
 * /etc/lab-node/kubelet.json. It fails where a real kubelet would refuse to start, and reports the
 * Node's Ready condition into the cluster store. The kubelet never reads instance-config.yaml
 * (only kubeadm applies it, into config.yaml).
 * Failure texts follow the kubelet's messages loosely: UNVERIFIED wording.
 */
import { parse } from "yaml";
import { exists, failOnce, installedKubeletVersion, readText, writeText } from "./common";
import { socketExists, socketPath } from "./cri";
import { CONFIG_YAML, FLAGS_ENV, parseFlagsEnv } from "./nodefiles";
import { REMOVED_KUBELET_FLAGS } from "./versions";
import { now, updateStore } from "./store";
import type { KubeletArg } from "./kubeadmconfig";

export const KUBELET_STATE = "/etc/lab-node/kubelet.json";

export interface KubeletState {
  state: "active" | "failed" | "inactive";
  reason?: string;
  since: string;
  enabled?: boolean;
  /** The endpoint the kubelet uses (when active). */
  endpoint?: string;
}

export function readKubeletState(): KubeletState {
  const t = readText(KUBELET_STATE);
  if (t === undefined) return { state: "inactive", since: now() };
  return JSON.parse(t) as KubeletState;
}

function writeState(s: KubeletState): void {
  writeText(KUBELET_STATE, JSON.stringify(s, null, 2) + "\n");
}

/** Why this node's kubelet would not start, or the endpoint it would use. */
export function kubeletCheck(): { ok: true; endpoint: string } | { ok: false; reason: string } {
  let minor: number;
  try {
    minor = installedKubeletVersion().minor;
  } catch {
    return { ok: false, reason: "kubelet is not installed (/etc/lab-node/kubeadm-version missing)" };
  }
  const cfgText = readText(CONFIG_YAML);
  if (cfgText === undefined) {
    return { ok: false, reason: `failed to load kubelet config file, path: ${CONFIG_YAML}, error: open ${CONFIG_YAML}: no such file or directory` };
  }
  let cfg: Record<string, unknown>;
  try {
    const o: unknown = parse(cfgText);
    if (typeof o !== "object" || o === null || Array.isArray(o)) throw new Error("not a KubeletConfiguration object");
    cfg = o as Record<string, unknown>;
    if (cfg.kind !== undefined && cfg.kind !== "KubeletConfiguration") throw new Error(`unexpected kind ${String(cfg.kind)}`);
  } catch (e) {
    return { ok: false, reason: `failed to load kubelet config file, path: ${CONFIG_YAML}, error: failed to decode: ${(e as Error).message.split("\n")[0]}` };
  }
  let flags: KubeletArg[] = [];
  const flagsText = readText(FLAGS_ENV);
  if (flagsText !== undefined) {
    try {
      flags = parseFlagsEnv(flagsText);
    } catch (e) {
      return { ok: false, reason: `cannot parse ${FLAGS_ENV}: ${(e as Error).message}` };
    }
  }
  for (const f of flags) {
    const removed = REMOVED_KUBELET_FLAGS.find((r) => r.flag === f.name && minor >= r.removedIn);
    if (removed) return { ok: false, reason: `failed to parse kubelet flag: unknown flag: --${f.name}` };
  }
  if (!exists("/etc/kubernetes/kubelet.conf") && !exists("/etc/kubernetes/bootstrap-kubelet.conf")) {
    return { ok: false, reason: "unable to load bootstrap kubeconfig: stat /etc/kubernetes/bootstrap-kubelet.conf: no such file or directory" };
  }
  const flag = flags.find((f) => f.name === "container-runtime-endpoint")?.value;
  const fromConfig = typeof cfg.containerRuntimeEndpoint === "string" ? cfg.containerRuntimeEndpoint : "";
  const endpoint = flag ?? fromConfig;
  if (endpoint === "") {
    return { ok: false, reason: "failed to run Kubelet: the container runtime endpoint address was not specified or empty, use --container-runtime-endpoint to set" };
  }
  const ep = endpoint.includes("://") ? endpoint : `unix://${endpoint}`;
  if (!socketExists(ep)) {
    return {
      ok: false,
      reason: `failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint ${JSON.stringify(ep)}: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix ${socketPath(ep) ?? ep}: connect: no such file or directory"`,
    };
  }
  return { ok: true, endpoint: ep };
}

/** The Node this kubelet registers as: `system:node:<name>` in kubelet.conf. */
export function registeredNodeName(): string | undefined {
  const t = readText("/etc/kubernetes/kubelet.conf");
  const m = t ? /system:node:([^\s"']+)/.exec(t) : null;
  return m ? m[1] : undefined;
}

/** Reports Ready (True, or Unknown when the kubelet is not running) for this node into the store. */
export async function reportReady(ready: boolean): Promise<void> {
  const name = registeredNodeName();
  if (!name) return;
  let version = "";
  try {
    version = installedKubeletVersion().text;
  } catch {
    /* not installed */
  }
  await updateStore((s) => {
    const node = s.nodes[name];
    if (!node) return;
    node.status.conditions = [
      ready
        ? { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status", lastHeartbeatTime: now() }
        : { type: "Ready", status: "Unknown", reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status.", lastHeartbeatTime: now() },
    ];
    if (ready && version) node.status.nodeInfo.kubeletVersion = version;
    node.metadata.resourceVersion = String(++s.revision);
  });
}

/**
 * `systemctl start|restart kubelet`: run the checks, record the state, report to the store. The lab
 * fault `kubelet-start` (`failOnce`) makes the next start that would succeed fail once (the kubelet
 * exits: failed), as a kubelet that crashes on its new files would.
 */
export async function startKubelet(): Promise<KubeletState> {
  const prev = readText(KUBELET_STATE) !== undefined ? readKubeletState() : undefined;
  let r = kubeletCheck();
  if (r.ok) {
    try {
      failOnce("kubelet-start", () => new Error("lab fault kubelet-start: the kubelet exited after its start (armed by a test)"));
    } catch (e) {
      r = { ok: false, reason: (e as Error).message };
    }
  }
  const s: KubeletState = r.ok
    ? { state: "active", since: now(), endpoint: r.endpoint, enabled: prev?.enabled }
    : { state: "failed", reason: r.reason, since: now(), enabled: prev?.enabled };
  writeState(s);
  await reportReady(r.ok);
  return s;
}

export async function stopKubelet(): Promise<void> {
  const prev = readText(KUBELET_STATE) !== undefined ? readKubeletState() : undefined;
  writeState({ state: "inactive", since: now(), enabled: prev?.enabled });
  await reportReady(false);
}

export function setEnabled(enabled: boolean): void {
  const s = readKubeletState();
  writeState({ ...s, enabled });
}
