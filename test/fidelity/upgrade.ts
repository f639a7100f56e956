/**
 * The upgrade half of the fidelity test: `kubeadm upgrade node` on a worker whose kubelet files and
 * Node annotation are given, real kubeadm against the stand-in. Real kubeadm talks to a real
 * kube-apiserver with etcd (kubeapiserver.ts) that holds the cluster's two ConfigMaps and the Node;
 * the stand-in reads the same objects from its cluster store. Compared: the three kubelet files, the outcome, and the Node's
 * cri-socket annotation afterwards.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { newNode } from "../lab/standin/cluster";
import { CRI_SOCKET_ANNOTATION, Store } from "../lab/standin/store";
import { STANDIN_COMMANDS, renderWrapper } from "../lab/nodes/wrappers";
import { NODE_TOKEN, RealApi, realKubeconfig, replaceObject } from "./kubeapiserver";
import { CaseKey, FLAGS_ENV, GATES, Gate, HOSTNAME, INSTANCE_CONFIG, KUBELET_FILES, CONFIG_YAML, featureGates, minorOf } from "./cases";
import { Artifacts, readArtifacts } from "./compare";
import { hostPath, prepareRoot, runInNamespace } from "./namespace";
import { FAKE_SYSTEMCTL, SideResult, keepOutput, linkBinary } from "./nodes";

/**
 * `kubeadm upgrade node`, with the two preflight checks that cannot pass here made warnings (from
 * 1.35 a worker's upgrade runs them): SystemVerification runs `kubelet --version` (there is no
 * kubelet), ContainerRuntimeVersion asks the runtime over CRI (the sockets only accept and close).
 */
export const UPGRADE_ARGS = ["upgrade", "node", "--ignore-preflight-errors=SystemVerification,ContainerRuntimeVersion"];

/** The pseudo-artifact holding the Node's cri-socket annotation after the run. */
export const ANNOTATION = "annotation";

const CONTAINERD = "unix:///var/run/containerd/containerd.sock";
const CRIO = "unix:///var/run/crio/crio.sock";

/** A worker's state before `kubeadm upgrade node`. */
export interface UpgradeInput {
  id: string;
  title: string;
  /** kubeadm-flags.env before */
  flags: string;
  /** instance-config.yaml before (absent: no file) */
  instanceConfig?: string;
  /** the Node's cri-socket annotation before (absent: none) */
  annotation?: string;
}

const flagsWith = (endpoint?: string): string =>
  `KUBELET_KUBEADM_ARGS="${endpoint ? `--container-runtime-endpoint=${endpoint} ` : ""}--pod-infra-container-image=registry.k8s.io/pause:3.9"\n`;

/**
 * The worker states, in table order. The node's runtime is CRI-O; containerd's socket listens too,
 * so a kubeadm that detects the socket instead of reading the flag finds two and takes its default
 * (containerd), which the comparison then shows.
 */
export const UPGRADE_INPUTS: readonly UpgradeInput[] = [
  { id: "flag", title: "legacy worker: the flag and the annotation (CRI-O), no instance-config.yaml", flags: flagsWith(CRIO), annotation: CRIO },
  {
    id: "flag+stale-file",
    title: "the flag and the annotation (CRI-O), and an instance-config.yaml naming containerd (left from before a runtime switch)",
    flags: flagsWith(CRIO),
    instanceConfig: `containerRuntimeEndpoint: "${CONTAINERD}"\n`,
    annotation: CRIO,
  },
  { id: "no-flag", title: "the annotation (CRI-O), but neither the flag nor instance-config.yaml", flags: flagsWith(), annotation: CRIO },
  { id: "file-only", title: "node-local worker: instance-config.yaml (CRI-O), no flag, no annotation", flags: flagsWith(), instanceConfig: `containerRuntimeEndpoint: "${CRIO}"\n` },
  { id: "flag-only", title: "the flag (CRI-O), but neither the annotation nor instance-config.yaml", flags: flagsWith(CRIO) },
  {
    id: "no-flags",
    title: 'node-local worker as kubeadm 1.35 leaves it: instance-config.yaml (CRI-O), KUBELET_KUBEADM_ARGS="" (no flag at all), no annotation',
    flags: 'KUBELET_KUBEADM_ARGS=""\n',
    instanceConfig: `containerRuntimeEndpoint: "${CRIO}"\n`,
  },
];

/** Sockets listening on an upgraded worker: both runtimes (see UPGRADE_INPUTS). */
const UPGRADE_SOCKETS = ["/run/containerd/containerd.sock", "/run/crio/crio.sock"];

/** One `kubeadm upgrade node` run. */
export interface UpgradeCase extends CaseKey {
  input: UpgradeInput;
  phase: "upgrade-node";
}

/** Every upgrade case for the given versions: versions x gates x inputs, in table order. */
export function upgradeCases(versions: readonly string[]): UpgradeCase[] {
  return versions.flatMap((version) => GATES.flatMap((gate) => UPGRADE_INPUTS.map((input) => ({ version, minor: minorOf(version), gate, input, phase: "upgrade-node" as const }))));
}

/**
 * The cluster-wide KubeletConfiguration (the kubelet-config ConfigMap), as kubeadm 1.31 uploads it
 * (later minors add fields when they write config.yaml, which the comparison then shows).
 */
export const KUBELET_CONFIG_MAP = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
authorization:
  mode: Webhook
  webhook:
    cacheAuthorizedTTL: 0s
    cacheUnauthorizedTTL: 0s
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: ""
cpuManagerReconcilePeriod: 0s
evictionPressureTransitionPeriod: 0s
fileCheckFrequency: 0s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
httpCheckFrequency: 0s
imageMaximumGCAge: 0s
imageMinimumGCAge: 0s
kind: KubeletConfiguration
logging:
  flushFrequency: 0
  options:
    json:
      infoBufferSize: "0"
    text:
      infoBufferSize: "0"
  verbosity: 0
memorySwap: {}
nodeStatusReportFrequency: 0s
nodeStatusUpdateFrequency: 0s
rotateCertificates: true
runtimeRequestTimeout: 0s
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 0s
volumeStatsAggPeriod: 0s
`;

/** The kubeadm-config ConfigMap's ClusterConfiguration: the case's version and gate. */
export function clusterConfiguration(version: string, gate: Gate): string {
  const gates = featureGates(gate);
  return stringify({
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "ClusterConfiguration",
    kubernetesVersion: version,
    ...(Object.keys(gates).length > 0 ? { featureGates: gates } : {}),
    networking: { dnsDomain: "cluster.local", serviceSubnet: "10.96.0.0/12" },
  });
}

/** The two ConfigMaps' data, keyed `kube-system/<name>`. */
function configMapData(c: UpgradeCase): Record<string, Record<string, string>> {
  return {
    "kube-system/kubeadm-config": { ClusterConfiguration: clusterConfiguration(c.version, c.gate) },
    "kube-system/kubelet-config": { kubelet: KUBELET_CONFIG_MAP },
  };
}

/** The user the worker's kubelet.conf authenticates as. */
const NODE_USER = `system:node:${HOSTNAME}`;

/** The worker's files before the run, and its kubelet.conf (naming the node; for real kubeadm the real API's). */
function writeNodeState(root: string, c: UpgradeCase, kubeletConf: string): void {
  fs.writeFileSync(hostPath(root, "/etc/kubernetes/kubelet.conf"), kubeletConf, { mode: 0o600 });
  fs.writeFileSync(hostPath(root, CONFIG_YAML), KUBELET_CONFIG_MAP, { mode: 0o644 });
  fs.writeFileSync(hostPath(root, FLAGS_ENV), c.input.flags, { mode: 0o644 });
  if (c.input.instanceConfig !== undefined) fs.writeFileSync(hostPath(root, INSTANCE_CONFIG), c.input.instanceConfig, { mode: 0o644 });
}

function withAnnotation(artifacts: Artifacts, value: string | undefined): Artifacts {
  return { ...artifacts, [ANNOTATION]: { text: value === undefined ? "(none)\n" : `${value}\n` } };
}

/** Real kubeadm's `upgrade node` for a case, on a fresh worker under `dir`, against the real API (its turn alone). */
export async function runRealUpgrade(dir: string, binary: string, c: UpgradeCase, api: RealApi): Promise<SideResult & { apiRequests: string[] }> {
  const root = path.join(dir, "root");
  prepareRoot(root);
  linkBinary(binary, hostPath(root, "/usr/local/sbin/kubeadm"));
  fs.writeFileSync(hostPath(root, "/usr/local/sbin/systemctl"), FAKE_SYSTEMCTL, { mode: 0o755 });
  writeNodeState(root, c, realKubeconfig(api.url, NODE_USER, NODE_TOKEN));
  return api.exclusive(async () => {
    for (const [key, data] of Object.entries(configMapData(c))) {
      const [namespace, name] = key.split("/");
      await replaceObject(api, `/api/v1/namespaces/${namespace}/configmaps`, name, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
    }
    const annotations = c.input.annotation !== undefined ? { [CRI_SOCKET_ANNOTATION]: c.input.annotation } : {};
    await replaceObject(api, "/api/v1/nodes", HOSTNAME, { apiVersion: "v1", kind: "Node", metadata: { name: HOSTNAME, labels: { "kubernetes.io/hostname": HOSTNAME }, annotations }, spec: {} });
    const mark = api.auditMark();
    const args = UPGRADE_ARGS;
    const r = await runInNamespace({ root, hostname: HOSTNAME, sockets: UPGRADE_SOCKETS, command: ["kubeadm", ...args] });
    keepOutput(dir, args, r);
    const apiRequests = api.requestsSince(mark, NODE_USER);
    fs.writeFileSync(path.join(dir, "api-requests"), apiRequests.join("\n") + "\n");
    const node = await api.request("GET", `/api/v1/nodes/${HOSTNAME}`);
    if (node.code !== 200) throw new Error(`GET node ${HOSTNAME} after the upgrade: ${node.code} ${JSON.stringify(node.body)}`);
    const annotation = (node.body as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations?.[CRI_SOCKET_ANNOTATION];
    return { args, ...r, artifacts: withAnnotation(readArtifacts(root, KUBELET_FILES, r.code, r.stderr), annotation), apiRequests };
  });
}

/** The stand-in's `upgrade node` for a case: its cluster store holds the same ConfigMaps and Node. */
export async function runStandinUpgrade(dir: string, c: UpgradeCase): Promise<SideResult> {
  const root = path.join(dir, "root");
  const labDir = path.join(dir, "lab");
  prepareRoot(root);
  for (const cmd of STANDIN_COMMANDS) fs.writeFileSync(hostPath(root, `/usr/local/sbin/${cmd}`), renderWrapper(cmd, labDir, HOSTNAME), { mode: 0o755 });
  fs.writeFileSync(hostPath(root, "/etc/lab-node/kubeadm-version"), `${c.version}\n`);
  writeNodeState(root, c, realKubeconfig("https://127.0.0.1:6443", NODE_USER, NODE_TOKEN));
  // The store as the lab's stand-in API server keeps it (test/lab/README.md: one JSON document).
  const store: Store = { revision: 1, nodes: {}, configMaps: {}, tokens: [], drainBlocks: {} };
  for (const [key, data] of Object.entries(configMapData(c))) {
    const [namespace, name] = key.split("/");
    store.configMaps[key] = { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, resourceVersion: String(++store.revision), creationTimestamp: "2026-01-01T00:00:00Z" }, data };
  }
  // newNode reads the lab's clock from $LAB_DIR/config.json: point it at this node's lab for the
  // synchronous call (no other case can run in between).
  const previous = process.env.LAB_DIR;
  process.env.LAB_DIR = labDir;
  try {
    store.nodes[HOSTNAME] = newNode(store, { name: HOSTNAME, controlPlane: false, taints: [], criAnnotation: c.input.annotation, version: c.version });
  } finally {
    if (previous === undefined) delete process.env.LAB_DIR;
    else process.env.LAB_DIR = previous;
  }
  const storeFile = path.join(labDir, "cluster", "store.json");
  fs.mkdirSync(path.dirname(storeFile), { recursive: true });
  fs.writeFileSync(storeFile, JSON.stringify(store, null, 2));
  const args = UPGRADE_ARGS;
  const r = await runInNamespace({ root, hostname: HOSTNAME, sockets: UPGRADE_SOCKETS, command: ["kubeadm", ...args] });
  keepOutput(dir, args, r);
  const after = JSON.parse(fs.readFileSync(storeFile, "utf8")) as Store;
  return { args, ...r, artifacts: withAnnotation(readArtifacts(root, KUBELET_FILES, r.code, r.stderr), after.nodes[HOSTNAME]?.metadata.annotations[CRI_SOCKET_ANNOTATION]) };
}
