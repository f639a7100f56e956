/**
 * TEST DOUBLE (lab stand-in, not real kubeadm): reading kubeadm config files (v1beta4, multi-doc
 * YAML) and rendering what kubeadm stores: the ClusterConfiguration of the kubeadm-config ConfigMap
 * and the cluster-wide KubeletConfiguration of the kubelet-config ConfigMap.
 */
import * as fs from "fs";
import { parseAllDocuments, stringify } from "yaml";
import { Fail, p } from "./common";
import type { Taint } from "./store";

export type Obj = Record<string, unknown>;
export interface KubeletArg {
  name: string;
  value: string;
}

export interface NodeRegistration {
  name?: string;
  criSocket?: string;
  /** undefined = not given (control planes get the default taint); [] = none. */
  taints?: Taint[];
  kubeletExtraArgs: KubeletArg[];
  ignorePreflightErrors: string[];
}

export interface ConfigFile {
  init?: Obj;
  cluster?: Obj;
  join?: Obj;
  kubelet?: Obj;
  upgrade?: Obj;
  warnings: string[];
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Reads a `--config` file: the node path under $LAB_ROOT when that exists, else the path as given.
 * UNVERIFIED: the exact read/decode error texts.
 */
export function readConfigFile(file: string, minor: number): ConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(fs.existsSync(p(file)) ? p(file) : file, "utf8");
  } catch {
    throw new Fail(`unable to read config from ${JSON.stringify(file)} : open ${file}: no such file or directory`);
  }
  const out: ConfigFile = { warnings: [] };
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Fail(`error converting YAML to JSON: ${doc.errors[0].message}`);
    const o: unknown = doc.toJS();
    if (o === null || o === undefined) continue;
    if (!isObj(o)) throw new Fail("error converting YAML to JSON: not a map");
    const apiVersion = String(o.apiVersion ?? "");
    const kind = String(o.kind ?? "");
    if (apiVersion.startsWith("kubeadm.k8s.io/")) {
      const ver = apiVersion.split("/")[1];
      if (ver !== "v1beta4" && !(ver === "v1beta3" && minor < 37)) {
        throw new Fail(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme/scheme.go:31"`);
      }
      if (kind === "InitConfiguration") out.init = o;
      else if (kind === "ClusterConfiguration") out.cluster = o;
      else if (kind === "JoinConfiguration") out.join = o;
      else if (kind === "UpgradeConfiguration") out.upgrade = o;
      else out.warnings.push(`[config] WARNING: Ignored YAML document with GroupVersionKind ${apiVersion}, Kind=${kind}`);
    } else if (apiVersion === "kubelet.config.k8s.io/v1beta1" && kind === "KubeletConfiguration") {
      out.kubelet = o;
    } else {
      out.warnings.push(`[config] WARNING: Ignored YAML document with GroupVersionKind ${apiVersion}, Kind=${kind}`);
    }
  }
  return out;
}

/** `nodeRegistration` of an Init/JoinConfiguration (v1beta4 list args; v1beta3 map args sorted). */
export function nodeRegistration(cfg: Obj | undefined): NodeRegistration {
  const nr = isObj(cfg?.nodeRegistration) ? (cfg!.nodeRegistration as Obj) : {};
  let args: KubeletArg[] = [];
  const raw = nr.kubeletExtraArgs;
  if (Array.isArray(raw)) args = raw.map((a: Obj) => ({ name: String(a.name), value: String(a.value ?? "") }));
  else if (isObj(raw)) args = Object.keys(raw).sort().map((k) => ({ name: k, value: String(raw[k]) }));
  return {
    name: typeof nr.name === "string" && nr.name !== "" ? nr.name : undefined,
    criSocket: typeof nr.criSocket === "string" && nr.criSocket !== "" ? nr.criSocket : undefined,
    taints: Array.isArray(nr.taints) ? (nr.taints as Taint[]) : nr.taints === null ? [] : undefined,
    kubeletExtraArgs: args,
    ignorePreflightErrors: Array.isArray(nr.ignorePreflightErrors) ? nr.ignorePreflightErrors.map(String) : [],
  };
}

export function featureGatesOf(cluster: Obj | undefined): Record<string, boolean> {
  const fg = cluster?.featureGates;
  if (!isObj(fg)) return {};
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(fg)) out[k] = v === true || v === "true";
  return out;
}

/** YAML as Go's sigs.k8s.io/yaml writes it: keys sorted, block style, sequences not indented. */
export function goYaml(o: unknown): string {
  return stringify(o, { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
}

/** The defaulted ClusterConfiguration kubeadm uploads; featureGates holds only explicit entries. */
export function renderClusterConfiguration(user: Obj | undefined, kubernetesVersion: string): string {
  const c: Obj = { ...(user ?? {}) };
  const net = isObj(c.networking) ? { ...(c.networking as Obj) } : {};
  const defaults: Obj = {
    apiServer: {},
    apiVersion: "kubeadm.k8s.io/v1beta4",
    caCertificateValidityPeriod: "87600h0m0s",
    certificateValidityPeriod: "8760h0m0s",
    certificatesDir: "/etc/kubernetes/pki",
    clusterName: "kubernetes",
    controllerManager: {},
    dns: {},
    encryptionAlgorithm: "RSA-2048",
    etcd: { local: { dataDir: "/var/lib/etcd" } },
    imageRepository: "registry.k8s.io",
    kind: "ClusterConfiguration",
    proxy: {},
    scheduler: {},
  };
  for (const [k, v] of Object.entries(defaults)) if (c[k] === undefined) c[k] = v;
  c.apiVersion = "kubeadm.k8s.io/v1beta4";
  c.kubernetesVersion = kubernetesVersion;
  c.networking = { dnsDomain: "cluster.local", serviceSubnet: "10.96.0.0/12", ...net };
  if (isObj(c.featureGates) && Object.keys(c.featureGates).length === 0) delete c.featureGates;
  return goYaml(c);
}

/** The tenth address of the service subnet (kubeadm's cluster DNS IP), IPv4 only. */
function dnsIP(serviceSubnet: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\//.exec(serviceSubnet.split(",")[0]);
  if (!m) return "10.96.0.10";
  const n = ((Number(m[1]) << 24) >>> 0) + (Number(m[2]) << 16) + (Number(m[3]) << 8) + Number(m[4]) + 10;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(out[k]) ? deepMerge(out[k] as Obj, v) : v;
  return out;
}

/** The cluster-wide KubeletConfiguration kubeadm renders (the kubelet-config ConfigMap's `kubelet`). */
export function renderKubeletConfiguration(cluster: Obj | undefined, user: Obj | undefined): string {
  const net = isObj(cluster?.networking) ? (cluster!.networking as Obj) : {};
  const base: Obj = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    authentication: {
      anonymous: { enabled: false },
      webhook: { cacheTTL: "0s", enabled: true },
      x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" },
    },
    authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "0s", cacheUnauthorizedTTL: "0s" } },
    cgroupDriver: "systemd",
    clusterDNS: [dnsIP(String(net.serviceSubnet ?? "10.96.0.0/12"))],
    clusterDomain: String(net.dnsDomain ?? "cluster.local"),
    containerRuntimeEndpoint: "",
    cpuManagerReconcilePeriod: "0s",
    evictionPressureTransitionPeriod: "0s",
    fileCheckFrequency: "0s",
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    httpCheckFrequency: "0s",
    imageMaximumGCAge: "0s",
    imageMinimumGCAge: "0s",
    kind: "KubeletConfiguration",
    logging: { flushFrequency: 0, options: { json: { infoBufferSize: "0" }, text: { infoBufferSize: "0" } }, verbosity: 0 },
    memorySwap: {},
    nodeStatusReportFrequency: "0s",
    nodeStatusUpdateFrequency: "0s",
    rotateCertificates: true,
    runtimeRequestTimeout: "0s",
    shutdownGracePeriod: "0s",
    shutdownGracePeriodCriticalPods: "0s",
    staticPodPath: "/etc/kubernetes/manifests",
    streamingConnectionIdleTimeout: "0s",
    syncFrequency: "0s",
    volumeStatsAggPeriod: "0s",
  };
  return goYaml(deepMerge(base, user ?? {}));
}
