/**
 * Validation of the user's cluster description into a {@link ValidCluster}. Every string that
 * reaches a kubeadm config, a kubelet flag or a shell is either refused here with a clear error
 * (naming node and field) or is carried purely as data (rendered through the `yaml` package or the
 * scripts layer's quoting helper). Rules mirror Kubernetes' own validation (RFC 1123 names,
 * qualified-name label keys, label values, taint effects) and kubeadm's (a stable
 * controlPlaneEndpoint for more than one control-plane node; the gate rule of gates.ts).
 */
import { durationSeconds } from "./duration";
import { criSocketProblem, criSocketSchemeWarning, normalizeCriSocket } from "./criSocket";
import { checkFeatureGateValues, kubeadmFeatureGates, nodeLocalCriSocketEnabled } from "./gates";
import {
  ClusterSpec,
  KubeadmConfigError,
  KubeletArg,
  Networking,
  NodeRole,
  Taint,
  TaintEffect,
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

const TAINT_EFFECTS: string[] = Object.values(TaintEffect);
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

/**
 * kubeadm's `controlPlaneEndpoint` rule (cmd/kubeadm/app/util/endpoint.go ParseHostPort, called by
 * validation.ValidateHostPort): `host`, `host:port` or `[IPv6]:port`; the host an IP address (a bare
 * IPv6 address too, when there is no port) or an RFC 1123 DNS subdomain, checked as written: kubeadm
 * does NOT lower-case it, so `K8S.Example.com` is refused there, and here. `[IPv6]` without a port is
 * refused, as kubeadm does (net.SplitHostPort fails, and `[...]` is neither an IP nor a DNS name).
 */
export function isHostPort(s: unknown): s is string {
  if (typeof s !== "string" || s === "") return false;
  const v6 = /^\[([^\]]+)\]:([^:]*)$/.exec(s);
  if (v6) return isIPv6(v6[1]) && validPort(v6[2]);
  if (isIPv6(s) && s.includes(":")) return true;
  const parts = s.split(":");
  if (parts.length > 2) return false;
  if (parts.length === 2 && !validPort(parts[1])) return false;
  return isIPv4(parts[0]) || isDnsSubdomain(parts[0]);
}

function isDeferred(v: unknown): boolean {
  // An Output or a Promise (a class instance, not JSON data): its value is known only at run time.
  return typeof v === "object" && v !== null && !Array.isArray(v) && !isPlainObject(v);
}

function isWhole(v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max;
}

function checkWhole(field: string, v: unknown, min: number): void {
  if (v !== undefined && !isWhole(v, min)) {
    throw new KubeadmConfigError(field, `${describeValue(v)} is not a whole number >= ${min}`);
  }
}

/** Why `host` (a node's or a proxy's SSH address) is unusable, or undefined when it is fine. */
function hostProblem(host: unknown): string | undefined {
  if (typeof host !== "string" || host === "") return `${describeValue(host)} is not a host name or address (a non-empty string)`;
  if (host.startsWith("-")) return `${JSON.stringify(host)} starts with "-", which an SSH client would read as an option`;
  if (/[\s\x00-\x1f\x7f]/.test(host)) return `${JSON.stringify(host)} contains whitespace or control characters`;
  if (host.startsWith("[")) {
    return `${JSON.stringify(host)}: write an IPv6 address without brackets (the SSH client joins host and port itself, Go net.JoinHostPort) and the port in port`;
  }
  if (host.includes(":") && !isIPv6(host)) return `${JSON.stringify(host)} contains ":": put the port in port, not in host`;
  if (/['"`$;\\@\/,<>|&(){}\[\]*?!#=]/.test(host)) {
    return `${JSON.stringify(host)} is not a host name or address (letters, digits, ".", "-", "_"; or an IP address)`;
  }
  return undefined;
}

function userProblem(user: unknown): string | undefined {
  if (typeof user !== "string" || user === "") return `${describeValue(user)} is not a user name (a non-empty string)`;
  if (/[\s\x00-\x1f\x7f]/.test(user)) return `${JSON.stringify(user)} contains whitespace or control characters`;
  if (user.startsWith("-")) return `${JSON.stringify(user)} starts with "-"`;
  return undefined;
}

/** An SSH public key line `<type> <base64> [comment]` whose key data names the same type. */
function hostKeyProblem(key: unknown): string | undefined {
  const form = "must be one line `<type> <base64>` as in known_hosts/authorized_keys (e.g. the output of `ssh-keyscan -t ed25519 <host>` without the host: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA<rest of the key>`)";
  if (typeof key !== "string") return `${describeValue(key)}: ${form}`;
  const m = /^([a-z0-9][a-z0-9@.-]*) ([A-Za-z0-9+/]+={0,2})( [^\x00-\x1f\x7f]*)?\n?$/.exec(key);
  if (!m) return form;
  const blob = Buffer.from(m[2], "base64");
  const len = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
  if (len < 1 || 4 + len > blob.length || blob.subarray(4, 4 + len).toString("latin1") !== m[1]) {
    return `the key data is not a ${m[1]} public key`;
  }
  return undefined;
}

const PROXY_FIELDS = ["host", "port", "user", "privateKey", "hostKey"];

function validateProxy(proxy: unknown, node: string): void {
  if (proxy === undefined || isDeferred(proxy)) return;
  if (!isPlainObject(proxy)) throw new KubeadmConfigError("proxy", `${describeValue(proxy)} is not a map ({host, port?, user?, privateKey?, hostKey?})`, node);
  for (const k of Object.keys(proxy)) {
    if (!PROXY_FIELDS.includes(k)) throw new KubeadmConfigError(`proxy.${k}`, `unknown field (${PROXY_FIELDS.join(", ")})`, node);
  }
  if (proxy.host === undefined) throw new KubeadmConfigError("proxy.host", "is required (the bastion's address)", node);
  checkConnection(proxy, "proxy.", node);
  if (proxy.privateKey !== undefined && !isDeferred(proxy.privateKey) && (typeof proxy.privateKey !== "string" || proxy.privateKey === "")) {
    throw new KubeadmConfigError("proxy.privateKey", "must be the private key text (a non-empty string)", node); // never echo a key
  }
}

/** The plain SSH fields of a node or its proxy (`prefix` "" or "proxy."): host, port, user, hostKey. */
function checkConnection(c: Record<string, unknown>, prefix: string, node: string): void {
  const check = (field: string, problem: (v: unknown) => string | undefined): void => {
    const v = c[field];
    const p = v === undefined || isDeferred(v) ? undefined : problem(v);
    if (p) throw new KubeadmConfigError(prefix + field, p, node);
  };
  check("host", hostProblem);
  check("port", (v) => (isWhole(v, 1, 65535) ? undefined : `${describeValue(v)} is not a TCP port (a whole number 1-65535)`));
  check("user", userProblem);
  check("hostKey", hostKeyProblem);
}

/** A positive kubeadm duration in the form the scripts pass to `kubeadm token create --ttl`: `XhYmZs`. */
function isPositiveDuration(v: unknown): v is string {
  return (durationSeconds(v) ?? 0) > 0;
}

function checkInstallCommand(field: string, v: unknown, node?: string): void {
  if (v === undefined) return;
  if (typeof v !== "string" || (v !== "" && v.trim() === "") || v.includes("\0")) {
    throw new KubeadmConfigError(field, `${describeValue(v)} is not a command (a string without NUL; "" for none)`, node);
  }
}

/**
 * `gone`: a boolean, and only on a worker: a control-plane node's machine holds an etcd member, which
 * `kubeadm reset` would have removed; without the machine it must be removed by hand first.
 */
function validateGone(v: unknown, role: NodeRole, node: string): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (v !== true) throw new KubeadmConfigError("gone", `${describeValue(v)} is not true or false`, node);
  if (role !== "worker") {
    throw new KubeadmConfigError(
      "gone",
      "only a worker's machine can be written off this way: a control-plane node holds an etcd member, which kubeadm reset would remove; remove it by hand first (etcdctl member remove on another control-plane node), then take the node out of the stack with `pulumi state delete` of its resources",
      node,
    );
  }
  return true;
}

function describe(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : typeof v;
}

/** A short rendering of a value for an error: strings quoted, null/NaN/numbers as written, else the type. */
function describeValue(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 80 ? `${v.slice(0, 80)}...` : v);
  if (v === null || typeof v === "number" || typeof v === "boolean") return String(v);
  return Array.isArray(v) ? "a list" : typeof v;
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

function validateTaints(taints: unknown, node: string): Taint[] | undefined {
  // Unset: kubeadm's default (a control-plane node gets its NoSchedule taint); [] means none.
  if (taints === undefined || taints === null) return undefined;
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
    return { key: t.key, ...(t.value !== undefined ? { value: t.value as string } : {}), effect: t.effect as TaintEffect };
  });
}

/**
 * Validates the user's cluster and returns it normalised: versions parsed, roles checked, sockets
 * normalised (`unix://` prepended to bare paths, with kubeadm's deprecation warning in `warnings`
 * naming the node), lists defaulted to empty, the gate resolved (honour or refuse, see gates.ts),
 * the kubeadm featureGates map computed.
 *
 * `spec` may be arbitrary JSON from stack config (`requireObject`): every field is checked for its
 * type, never trusted. Connection fields (`host`, `user`, `hostKey`, `proxy` and its fields) are
 * checked when they are plain values; an Output or a Promise there is left to run time.
 *
 * @throws KubeadmConfigError naming node and field on:
 *   - `nodes`: not a list, or empty; no control-plane node; an entry that is not a map
 *     (`nodes[5]: must be a map`);
 *   - a node `name` that is not an RFC 1123 DNS subdomain (kubeadm's rule for nodeRegistration.name:
 *     `ip-10-0-1-23.ec2.internal` is fine; capitals are refused with the lowercase spelling as a hint);
 *     duplicate names; a `role` other than
 *     control-plane/worker; an invalid `criSocket`;
 *   - `host`: not a non-empty string, starting with `-` (an SSH client would read an option), with
 *     whitespace, control or shell characters, in brackets, or with a `:` unless it is an IPv6 address
 *     (`host:port` belongs in `port`); missing when `hostGiven` is false; duplicate host+port (22 default);
 *   - `port`, `proxy.port`: not a whole number 1..65535;
 *   - `user`, `proxy.user`: not a non-empty string, with whitespace or control characters, or starting with `-`;
 *   - `hostKey`, `proxy.hostKey`: present (null included) but not one line `<type> <base64> [comment]`
 *     whose key data is of that type;
 *   - `proxy`: not a map, an unknown field, no `host`, `privateKey` not a non-empty string;
 *   - `gone`: not a boolean, or set on a control-plane node;
 *   - `kubeadmInstallCommand`, `kubeletInstallCommand` (cluster or node): not a string, or blank but not
 *     empty (`""` means no install step), or holding NUL;
 *   - `drainTimeoutSeconds`, `drainGracePeriodSeconds`, `kubeletSettleSeconds`: not a whole number >= 0;
 *     `maxConcurrentJoins`, `maxUnavailableWorkers`: not a whole number >= 1;
 *   - `joinTokenTtl`: not a positive kubeadm duration `XhYmZs` (checked even when nothing joins yet);
 *   - `kubernetesVersion` malformed or unsupported; `featureGates` not booleans, a gate name that
 *     differs from a kubeadm gate only in case (`NodeLocalCriSocket`), a gate kubeadm of this minor
 *     does not accept (a kubelet gate such as `GracefulNodeShutdown`: the message points to
 *     kubeletConfiguration.featureGates; a removed or deprecated kubeadm gate), or a gate value the
 *     version cannot honour;
 *   - `kubeletConfiguration` not a plain map or setting containerRuntimeEndpoint/apiVersion/kind;
 *   - `controlPlaneEndpoint` malformed as kubeadm sees it (see {@link isHostPort}: capitals refused,
 *     with a hint), or missing with several control-plane nodes; malformed `networking`;
 *   - bad `labels`, `taints` or `kubeletExtraArgs` (see the field rules in this file).
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
    const cpe: unknown = spec.controlPlaneEndpoint;
    const hint =
      typeof cpe === "string" && /[A-Z]/.test(cpe) && isHostPort(cpe.toLowerCase())
        ? `: kubeadm checks the host as an RFC 1123 DNS name as written and refuses capitals; write ${JSON.stringify(cpe.toLowerCase())}`
        : "";
    throw new KubeadmConfigError(
      "controlPlaneEndpoint",
      `${describe(cpe)} is not host or host:port (lower-case DNS name, IPv4, IPv6, or [IPv6]:port)${hint}`,
    );
  }
  checkWhole("drainTimeoutSeconds", spec.drainTimeoutSeconds, 0);
  checkWhole("drainGracePeriodSeconds", spec.drainGracePeriodSeconds, 0);
  checkWhole("maxConcurrentJoins", spec.maxConcurrentJoins, 1);
  checkWhole("maxUnavailableWorkers", spec.maxUnavailableWorkers, 1);
  checkWhole("kubeletSettleSeconds", spec.kubeletSettleSeconds, 0);
  if (spec.joinTokenTtl !== undefined && !isPositiveDuration(spec.joinTokenTtl)) {
    throw new KubeadmConfigError("joinTokenTtl", `${describeValue(spec.joinTokenTtl)} is not a positive kubeadm duration such as 2h0m0s (hours h, minutes m, seconds s)`);
  }
  checkInstallCommand("kubeadmInstallCommand", spec.kubeadmInstallCommand);
  checkInstallCommand("kubeletInstallCommand", spec.kubeletInstallCommand);
  if (!Array.isArray(spec.nodes)) throw new KubeadmConfigError("nodes", `${describeValue(spec.nodes)} is not a list of nodes`);
  if (spec.nodes.length === 0) throw new KubeadmConfigError("nodes", "needs at least one node");

  const warnings: string[] = [];
  const names = new Set<string>();
  const endpoints = new Map<string, string>();
  const nodes: ValidNode[] = spec.nodes.map((n: unknown, index) => {
    if (!isPlainObject(n)) throw new KubeadmConfigError(`nodes[${index}]`, "must be a map");
    const name = n.name;
    if (!isDnsSubdomain(name)) {
      const hint =
        typeof name === "string" && /[A-Z]/.test(name) && isDnsSubdomain(name.toLowerCase())
          ? `: kubeadm and Kubernetes refuse capitals in a Node name; write it in lowercase, ${JSON.stringify(name.toLowerCase())}`
          : "";
      throw new KubeadmConfigError(
        `nodes[${index}].name`,
        `${describe(name)} is not an RFC 1123 DNS subdomain, as kubeadm checks nodeRegistration.name (lower-case a-z 0-9 - and ., at most 253; each dot-separated part 1-63 long with alphanumeric ends)${hint}`,
      );
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
    if (n.host === undefined && n.hostGiven === false) throw new KubeadmConfigError("host", "is required (the address SSH dials)", name);
    checkConnection(n, "", name);
    validateProxy(n.proxy, name);
    checkInstallCommand("kubeadmInstallCommand", n.kubeadmInstallCommand, name);
    checkInstallCommand("kubeletInstallCommand", n.kubeletInstallCommand, name);
    if (typeof n.host === "string" && !isDeferred(n.port)) {
      const id = `${n.host.includes(":") ? `[${n.host.toLowerCase()}]` : n.host.toLowerCase()}:${n.port ?? 22}`;
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
      gone: validateGone(n.gone, n.role as NodeRole, name),
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
