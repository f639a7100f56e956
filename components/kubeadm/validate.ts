/**
 * Validation of the user's cluster description into a {@link ValidCluster}. Every string that
 * reaches a kubeadm config, a kubelet flag or a shell is either refused here with a clear error
 * (naming node and field) or is carried purely as data (rendered through the `yaml` package or the
 * scripts layer's quoting helper). Rules mirror Kubernetes' own validation (RFC 1123 names,
 * qualified-name label keys, label values, taint effects) and kubeadm's (a stable
 * controlPlaneEndpoint for more than one control-plane node; the gate rule of gates.ts).
 */
import { criSocketProblem, criSocketSchemeWarning, normalizeCriSocket } from "./criSocket";
import { checkFeatureGateValues, kubeadmFeatureGates, nodeLocalCriSocketEnabled } from "./gates";
import {
  ClusterSpec,
  KubeadmConfigError,
  KubeletArg,
  Networking,
  NodeRole,
  Taint,
  ValidCluster,
  ValidNode,
} from "./types";
import { parseKubernetesVersion } from "./version";

/** RFC 1123 DNS label: 1-63 of `[a-z0-9-]`, starting and ending alphanumeric. */
export function isDnsLabel(s: unknown): s is string {
  return typeof s === "string" && s.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s);
}

/** RFC 1123 DNS subdomain: dot-separated DNS labels, at most 253 characters. */
export function isDnsSubdomain(s: unknown): s is string {
  return typeof s === "string" && s.length > 0 && s.length <= 253 && s.split(".").every(isDnsLabel);
}

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** Kubernetes qualified name (label/taint key): optional `<DNS subdomain>/` prefix, name 1-63 of `[-A-Za-z0-9_.]`, alphanumeric ends. */
export function isLabelKey(s: unknown): s is string {
  if (typeof s !== "string") return false;
  const parts = s.split("/");
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2 && !isDnsSubdomain(parts[0])) return false;
  return name.length <= 63 && NAME_PART.test(name);
}

/** Kubernetes label value: empty, or 1-63 of `[-A-Za-z0-9_.]` with alphanumeric ends. */
export function isLabelValue(s: unknown): s is string {
  return typeof s === "string" && (s === "" || (s.length <= 63 && NAME_PART.test(s)));
}

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const ARG_NAME = /^[a-z0-9][a-z0-9-]*$/;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Whether `v` is JSON-like data: strings, finite numbers, booleans, null, arrays and plain objects. */
function isPlainData(v: unknown, depth = 0): boolean {
  if (depth > 32) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isPlainData(x, depth + 1));
  if (isPlainObject(v)) return Object.values(v).every((x) => isPlainData(x, depth + 1));
  return false;
}

function isIPv4(s: string): boolean {
  const p = s.split(".");
  return p.length === 4 && p.every((x) => /^(0|[1-9][0-9]{0,2})$/.test(x) && Number(x) <= 255);
}

function isIPv6(s: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(s) || s.split("::").length > 2) return false;
  let body = s;
  const last = s.slice(s.lastIndexOf(":") + 1);
  if (last.includes(".")) {
    if (!isIPv4(last)) return false;
    body = s.slice(0, s.lastIndexOf(":") + 1) + "0:0"; // an embedded IPv4 counts as two groups
  }
  const groups = body.split(":");
  const compressed = body.includes("::");
  const filled = groups.filter((g) => g !== "");
  if (!filled.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  return compressed ? filled.length < 8 : groups.length === 8;
}

function isCidr(s: string): boolean {
  const m = /^([^/]+)\/([0-9]{1,3})$/.exec(s);
  if (!m) return false;
  const bits = Number(m[2]);
  if (isIPv4(m[1])) return bits <= 32;
  if (isIPv6(m[1])) return bits <= 128;
  return false;
}

function validPort(s: string): boolean {
  return /^[0-9]{1,5}$/.test(s) && Number(s) >= 1 && Number(s) <= 65535;
}

/** `host` or `host:port`, host a DNS subdomain, an IPv4 address or a bracketed IPv6 address. */
export function isHostPort(s: unknown): s is string {
  if (typeof s !== "string" || s === "") return false;
  const v6 = /^\[([^\]]+)\](?::([^:]*))?$/.exec(s);
  if (v6) return isIPv6(v6[1]) && (v6[2] === undefined || validPort(v6[2]));
  const parts = s.split(":");
  if (parts.length > 2) return false;
  if (parts.length === 2 && !validPort(parts[1])) return false;
  return isIPv4(parts[0]) || isDnsSubdomain(parts[0].toLowerCase()) && parts[0] === parts[0].toLowerCase();
}

function describe(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : typeof v;
}

function validateNetworking(n: unknown): Networking {
  if (n === undefined || n === null) return {};
  if (!isPlainObject(n)) throw new KubeadmConfigError("networking", "must be a map");
  const out: Networking = {};
  for (const [k, v] of Object.entries(n)) {
    if (v === undefined) continue;
    if (k === "podSubnet" || k === "serviceSubnet") {
      const list = typeof v === "string" ? v.split(",") : [];
      if (list.length === 0 || list.length > 2 || !list.every(isCidr)) {
        throw new KubeadmConfigError(`networking.${k}`, `${describe(v)} is not a CIDR (or two comma-separated CIDRs for dual stack)`);
      }
      out[k] = v as string;
    } else if (k === "dnsDomain") {
      if (!isDnsSubdomain(v)) throw new KubeadmConfigError("networking.dnsDomain", `${describe(v)} is not a DNS domain`);
      out.dnsDomain = v;
    } else {
      throw new KubeadmConfigError(`networking.${k}`, "unknown field (podSubnet, serviceSubnet, dnsDomain)");
    }
  }
  return out;
}

function validateKubeletConfiguration(k: unknown): Record<string, unknown> {
  if (k === undefined || k === null) return {};
  if (!isPlainObject(k)) throw new KubeadmConfigError("kubeletConfiguration", "must be a plain map of KubeletConfiguration fields");
  for (const key of Object.keys(k)) {
    if (key === "containerRuntimeEndpoint") {
      throw new KubeadmConfigError("kubeletConfiguration.containerRuntimeEndpoint", "is per node here: set criSocket on the node instead");
    }
    if (key === "apiVersion" || key === "kind") {
      throw new KubeadmConfigError(`kubeletConfiguration.${key}`, "is set by this component (kubelet.config.k8s.io/v1beta1 KubeletConfiguration)");
    }
    if (!isPlainData(k[key])) throw new KubeadmConfigError(`kubeletConfiguration.${key}`, "must be plain data (strings, numbers, booleans, lists, maps)");
  }
  return { ...k };
}

function validateArgs(args: unknown, node: string): KubeletArg[] {
  if (args === undefined || args === null) return [];
  if (!Array.isArray(args)) throw new KubeadmConfigError("kubeletExtraArgs", "must be a list of {name, value}", node);
  return args.map((a: unknown, i) => {
    const f = `kubeletExtraArgs[${i}]`;
    if (!isPlainObject(a)) throw new KubeadmConfigError(f, "must be {name, value}", node);
    const { name, value } = a;
    if (typeof name !== "string" || !ARG_NAME.test(name)) {
      throw new KubeadmConfigError(`${f}.name`, `${describe(name)} is not a kubelet flag name (lower-case letters, digits, dashes; no leading dashes)`, node);
    }
    if (name === "container-runtime-endpoint") {
      throw new KubeadmConfigError(`${f}.name`, "container-runtime-endpoint is per node: set criSocket instead", node);
    }
    if (typeof value !== "string") throw new KubeadmConfigError(`${f}.value`, "must be a string", node);
    // kubeadm-flags.env is expanded by systemd as $KUBELET_KUBEADM_ARGS, split on whitespace: a
    // value with whitespace would become several flags. Control characters are never valid.
    if (/[\s\x00-\x1f\x7f]/.test(value)) {
      throw new KubeadmConfigError(`${f}.value`, "must not contain whitespace or control characters (newline, CR, NUL, tab)", node);
    }
    return { name, value };
  });
}

function validateLabels(labels: unknown, node: string): Record<string, string> {
  if (labels === undefined || labels === null) return {};
  if (!isPlainObject(labels)) throw new KubeadmConfigError("labels", "must be a map of label key to value", node);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) {
    if (!isLabelKey(k)) throw new KubeadmConfigError(`labels.${k}`, "key is not a Kubernetes qualified name ([prefix/]name)", node);
    if (!isLabelValue(v)) throw new KubeadmConfigError(`labels.${k}`, `value ${describe(v)} is not a label value (at most 63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends)`, node);
    out[k] = v;
  }
  return out;
}

function validateTaints(taints: unknown, node: string): Taint[] {
  if (taints === undefined || taints === null) return [];
  if (!Array.isArray(taints)) throw new KubeadmConfigError("taints", "must be a list of {key, value?, effect}", node);
  const seen = new Set<string>();
  return taints.map((t: unknown, i) => {
    const f = `taints[${i}]`;
    if (!isPlainObject(t)) throw new KubeadmConfigError(f, "must be {key, value?, effect}", node);
    if (!isLabelKey(t.key)) throw new KubeadmConfigError(`${f}.key`, `${describe(t.key)} is not a qualified name`, node);
    if (t.value !== undefined && !isLabelValue(t.value)) throw new KubeadmConfigError(`${f}.value`, `${describe(t.value)} is not a valid taint value`, node);
    if (typeof t.effect !== "string" || !TAINT_EFFECTS.includes(t.effect)) {
      throw new KubeadmConfigError(`${f}.effect`, `${describe(t.effect)} is not one of ${TAINT_EFFECTS.join(", ")}`, node);
    }
    const id = `${t.key}:${t.effect}`;
    if (seen.has(id)) throw new KubeadmConfigError(f, `duplicate taint ${t.key} with effect ${t.effect}`, node);
    seen.add(id);
    return { key: t.key, ...(t.value !== undefined ? { value: t.value as string } : {}), effect: t.effect };
  });
}

/**
 * Validates the user's cluster and returns it normalised: versions parsed, roles checked, sockets
 * normalised (`unix://` prepended to bare paths, with kubeadm's deprecation warning in `warnings`
 * naming the node), lists defaulted to empty, the gate resolved (honour or refuse, see gates.ts),
 * the kubeadm featureGates map computed.
 * @throws KubeadmConfigError naming node and field on: no nodes or no control-plane node; a node
 *   name that is not an RFC 1123 DNS label; duplicate names; duplicate host+port (port 22 default);
 *   a role other than control-plane/worker; an invalid criSocket; a malformed or unsupported version;
 *   non-boolean gates or a gate value the version cannot honour; kubeletConfiguration not a plain
 *   map or setting containerRuntimeEndpoint/apiVersion/kind; several control-plane nodes without
 *   controlPlaneEndpoint; malformed controlPlaneEndpoint or networking; bad labels, taints or
 *   kubeletExtraArgs (see the field rules in this file).
 */
export function validateCluster(spec: ClusterSpec): ValidCluster {
  if (!isPlainObject(spec)) throw new KubeadmConfigError("cluster", "must be a map");
  const version = parseKubernetesVersion(spec.kubernetesVersion);
  const gates = checkFeatureGateValues(spec.featureGates);
  const nodeLocalCriSocket = nodeLocalCriSocketEnabled(spec.kubernetesVersion, gates);
  const featureGates = kubeadmFeatureGates(version, gates);
  const kubeletConfiguration = validateKubeletConfiguration(spec.kubeletConfiguration);
  const networking = validateNetworking(spec.networking);
  if (spec.controlPlaneEndpoint !== undefined && !isHostPort(spec.controlPlaneEndpoint)) {
    throw new KubeadmConfigError("controlPlaneEndpoint", `${describe(spec.controlPlaneEndpoint)} is not host or host:port (DNS name, IPv4, or [IPv6])`);
  }
  if (!Array.isArray(spec.nodes) || spec.nodes.length === 0) throw new KubeadmConfigError("nodes", "needs at least one node");

  const warnings: string[] = [];
  const names = new Set<string>();
  const endpoints = new Map<string, string>();
  const nodes: ValidNode[] = spec.nodes.map((n: unknown, index) => {
    if (!isPlainObject(n)) throw new KubeadmConfigError(`nodes[${index}]`, "must be a map");
    const name = n.name;
    if (!isDnsLabel(name)) {
      throw new KubeadmConfigError(`nodes[${index}].name`, `${describe(name)} is not an RFC 1123 DNS label (lower-case a-z 0-9 -, at most 63, alphanumeric ends)`);
    }
    if (names.has(name)) throw new KubeadmConfigError("name", "duplicate node name", name);
    names.add(name);
    if (n.role !== "control-plane" && n.role !== "worker") {
      throw new KubeadmConfigError("role", `${describe(n.role)} is neither "control-plane" nor "worker"`, name);
    }
    let criSocket: string | undefined;
    if (n.criSocket !== undefined) {
      const problem = criSocketProblem(n.criSocket);
      if (problem !== undefined) throw new KubeadmConfigError("criSocket", problem, name);
      const warning = criSocketSchemeWarning(n.criSocket as string);
      if (warning) warnings.push(`node "${name}": ${warning}`);
      criSocket = normalizeCriSocket(n.criSocket as string);
    }
    if (n.host !== undefined) {
      if (typeof n.host !== "string" || n.host === "" || /[\s\x00-\x1f\x7f'"`$;\\]/.test(n.host)) {
        throw new KubeadmConfigError("host", `${describe(n.host)} is not a usable host name or address`, name);
      }
    }
    if (n.port !== undefined && (typeof n.port !== "number" || !Number.isInteger(n.port) || n.port < 1 || n.port > 65535)) {
      throw new KubeadmConfigError("port", `${describe(n.port)} is not a TCP port (1-65535)`, name);
    }
    if (typeof n.host === "string") {
      const id = `${n.host.toLowerCase()}:${n.port ?? 22}`;
      const other = endpoints.get(id);
      if (other !== undefined) throw new KubeadmConfigError("host", `same host and port (${id}) as node "${other}"`, name);
      endpoints.set(id, name);
    }
    return {
      name,
      role: n.role as NodeRole,
      ...(criSocket !== undefined ? { criSocket } : {}),
      kubeletExtraArgs: validateArgs(n.kubeletExtraArgs, name),
      labels: validateLabels(n.labels, name),
      taints: validateTaints(n.taints, name),
      index,
    };
  });
  const controlPlane = nodes.filter((n) => n.role === "control-plane");
  if (controlPlane.length === 0) throw new KubeadmConfigError("nodes", "needs at least one control-plane node");
  if (controlPlane.length > 1 && spec.controlPlaneEndpoint === undefined) {
    throw new KubeadmConfigError(
      "controlPlaneEndpoint",
      `is required with ${controlPlane.length} control-plane nodes: kubeadm cannot add a control-plane node to a cluster without a stable endpoint`,
    );
  }
  return {
    version,
    nodes,
    controlPlane,
    workers: nodes.filter((n) => n.role === "worker"),
    nodeLocalCriSocket,
    kubeadmFeatureGates: featureGates,
    ...(spec.controlPlaneEndpoint !== undefined ? { controlPlaneEndpoint: spec.controlPlaneEndpoint } : {}),
    networking,
    kubeletConfiguration,
    warnings,
  };
}
