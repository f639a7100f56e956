/** What a lab is made of: nodes with an address, a port and container runtimes, and one version. */

export const RUNTIMES = ["containerd", "crio", "cri-dockerd"] as const;
export type Runtime = (typeof RUNTIMES)[number];

/** Each runtime's standard socket path (/var/run is /run). */
export const RUNTIME_SOCKETS: Record<Runtime, string> = {
  containerd: "/run/containerd/containerd.sock",
  crio: "/run/crio/crio.sock",
  "cri-dockerd": "/run/cri-dockerd.sock",
};

export interface NodeSpec {
  name: string;
  /** 127.0.0.x */
  address: string;
  port: number;
  runtimes: Runtime[];
  /** The machine's hostname, when it is not the node's name (the stand-ins see it as LAB_HOSTNAME). */
  hostname?: string;
}

export interface LabSpec {
  /** canonical `v1.x.y` */
  version: string;
  nodes: NodeSpec[];
}

export const DEFAULT_VERSION = "v1.33.2";

export function isRuntime(s: string): s is Runtime {
  return (RUNTIMES as readonly string[]).includes(s);
}

/** `1.33`, `v1.33`, `1.33.2` -> `v1.33.0` / `v1.33.2`; anything else throws. */
export function canonicalVersion(v: string): string {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(v.trim());
  if (!m) throw new Error(`kubernetes version ${JSON.stringify(v)} is not like v1.33.2`);
  return `v${m[1]}.${m[2]}.${m[3] ?? "0"}`;
}

/** Which runtime a criSocket names (`unix:///var/run/crio/crio.sock` -> crio); undefined if none. */
export function runtimeOfCriSocket(criSocket: string): Runtime | undefined {
  const p = criSocket.replace(/^unix:\/\//, "").replace(/^\/var\/run\//, "/run/");
  for (const r of RUNTIMES) if (p === RUNTIME_SOCKETS[r]) return r;
  if (/cri-dockerd/.test(p)) return "cri-dockerd";
  if (/crio/.test(p)) return "crio";
  if (/containerd/.test(p)) return "containerd";
  return undefined;
}

/** 127.0.0.(2+i) */
export function addressOf(index: number): string {
  const x = 2 + index;
  if (x > 254) throw new Error(`too many nodes: 127.0.0.${x} is out of range`);
  return `127.0.0.${x}`;
}

const NAME_RE = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;

/** Throws on duplicate names/addresses, bad names, non-loopback addresses. */
export function validateSpec(spec: LabSpec): LabSpec {
  canonicalVersion(spec.version);
  if (spec.nodes.length === 0) throw new Error("a lab needs at least one node");
  const names = new Set<string>();
  const endpoints = new Set<string>();
  for (const n of spec.nodes) {
    if (!NAME_RE.test(n.name)) throw new Error(`node name ${JSON.stringify(n.name)} is not a DNS label`);
    if (names.has(n.name)) throw new Error(`node name ${n.name} is used twice`);
    names.add(n.name);
    if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(n.address)) {
      throw new Error(`node ${n.name}: address ${n.address} is not a loopback address (127.x.y.z)`);
    }
    const ep = `${n.address}:${n.port}`;
    if (endpoints.has(ep)) throw new Error(`node ${n.name}: ${ep} is used by another node`);
    endpoints.add(ep);
    if (!Number.isInteger(n.port) || n.port < 1 || n.port > 65535) throw new Error(`node ${n.name}: bad port ${n.port}`);
    for (const r of n.runtimes) if (!isRuntime(r)) throw new Error(`node ${n.name}: unknown runtime ${String(r)}`);
  }
  return spec;
}
