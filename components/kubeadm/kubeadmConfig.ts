/**
 * kubeadm config API v1beta4 (kubeadm 1.31+) documents for `kubeadm init --config` and
 * `kubeadm join --config`. Rendered from plain objects with the `yaml` package, so user values are
 * data, never concatenated into YAML text, and every string that YAML 1.1 (kubeadm's decoder) would
 * read as something else is quoted: a node named `no`, a taint value `yes`, a flag value `on`. Node labels are not rendered: the component applies them
 * with kubectl. The socket goes in `nodeRegistration.criSocket` only; the KubeletConfiguration
 * never carries `containerRuntimeEndpoint` (per node: instance-config.yaml or the legacy flag).
 */
import { KubeadmConfigError, ValidCluster, ValidNode } from "./types";
import { stringifyYaml11 } from "./yaml11";

/** kubeadm config API group/version this project renders. */
export const KUBEADM_API_VERSION = "kubeadm.k8s.io/v1beta4";
/** KubeletConfiguration API group/version. */
export const KUBELET_API_VERSION = "kubelet.config.k8s.io/v1beta1";

/** What a joining node needs from the cluster (kubeadm `discovery.bootstrapToken`, `controlPlane`). */
export interface JoinMaterial {
  /** `host:port` of the API server (the controlPlaneEndpoint, or the first control-plane node). */
  apiServerEndpoint: string;
  /** Bootstrap token `[a-z0-9]{6}.[a-z0-9]{16}`. Secret: never echoed in errors. */
  token: string;
  /** `sha256:<64 hex>` pins of the cluster CA public key; at least one. */
  caCertHashes: string[];
  /** Hex key (64 hex chars) that decrypts the uploaded control-plane certificates; control-plane joins only. Secret. */
  certificateKey?: string;
}

function nodeRegistration(node: ValidNode, criSocket: string | undefined): Record<string, unknown> {
  const reg: Record<string, unknown> = { name: node.name };
  if (criSocket !== undefined) reg.criSocket = criSocket;
  // kubeadm v1beta4: taints absent (nil) = kubeadm's default control-plane taint; an empty list = none.
  if (node.taints !== undefined) {
    reg.taints = node.taints.map((t) => ({ key: t.key, ...(t.value !== undefined ? { value: t.value } : {}), effect: t.effect }));
  }
  if (node.kubeletExtraArgs.length > 0) {
    reg.kubeletExtraArgs = node.kubeletExtraArgs.map((a) => ({ name: a.name, value: a.value }));
  }
  return reg;
}

function documents(docs: Record<string, unknown>[]): string {
  return docs.map((d) => stringifyYaml11(d)).join("---\n");
}

function clusterConfiguration(cluster: ValidCluster): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    apiVersion: KUBEADM_API_VERSION,
    kind: "ClusterConfiguration",
    kubernetesVersion: cluster.version.text,
  };
  if (cluster.controlPlaneEndpoint !== undefined) doc.controlPlaneEndpoint = cluster.controlPlaneEndpoint;
  const net = Object.fromEntries(Object.entries(cluster.networking).filter(([, v]) => v !== undefined));
  if (Object.keys(net).length > 0) doc.networking = net;
  if (Object.keys(cluster.kubeadmFeatureGates).length > 0) doc.featureGates = { ...cluster.kubeadmFeatureGates };
  return doc;
}

/**
 * The multi-document config for `kubeadm init` on `node` (the first control-plane node):
 * InitConfiguration (nodeRegistration: name, criSocket when known, taints as the user gave them (an
 * empty list too: no taint), else omitted so kubeadm applies its default control-plane taint, kubeletExtraArgs as {name, value}
 * list), ClusterConfiguration (kubernetesVersion, controlPlaneEndpoint, networking, featureGates =
 * `cluster.kubeadmFeatureGates`, omitted when empty), KubeletConfiguration (the cluster's
 * kubeletConfiguration fields; never containerRuntimeEndpoint).
 * @param criSocket normalised endpoint, or undefined to let kubeadm detect it on the node.
 * @throws KubeadmConfigError when `node` is not a control-plane node, or the kubelet configuration
 *   holds containerRuntimeEndpoint.
 */
export function renderInitConfiguration(cluster: ValidCluster, node: ValidNode, criSocket: string | undefined): string {
  if (node.role !== "control-plane") throw new KubeadmConfigError("role", "kubeadm init runs on a control-plane node", node.name);
  const kubelet = cluster.kubeletConfiguration;
  if ("containerRuntimeEndpoint" in kubelet) {
    throw new KubeadmConfigError("kubeletConfiguration.containerRuntimeEndpoint", "is per node (criSocket)");
  }
  return documents([
    { apiVersion: KUBEADM_API_VERSION, kind: "InitConfiguration", nodeRegistration: nodeRegistration(node, criSocket) },
    clusterConfiguration(cluster),
    { ...kubelet, apiVersion: KUBELET_API_VERSION, kind: "KubeletConfiguration" },
  ]);
}

const TOKEN_RE = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
const HASH_RE = /^sha256:[0-9a-f]{64}$/;
const CERT_KEY_RE = /^[0-9a-f]{64}$/;

/**
 * The JoinConfiguration for `kubeadm join` on `node`: nodeRegistration as for init,
 * discovery.bootstrapToken {apiServerEndpoint, token, caCertHashes}, and for a control-plane node
 * `controlPlane` (with certificateKey when given).
 * @throws KubeadmConfigError (field `joinMaterial.<name>`) on a malformed token, hash, certificate key
 *   or endpoint; secret values are never quoted in the message.
 */
export function renderJoinConfiguration(
  cluster: ValidCluster,
  node: ValidNode,
  criSocket: string | undefined,
  material: JoinMaterial,
): string {
  void cluster; // the join document carries no cluster-wide field: joiners read kubeadm-config
  if (!/^[A-Za-z0-9.-]+:[0-9]{1,5}$|^\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}$/.test(material.apiServerEndpoint ?? "")) {
    throw new KubeadmConfigError("joinMaterial.apiServerEndpoint", `${JSON.stringify(material.apiServerEndpoint)} is not host:port`, node.name);
  }
  if (!TOKEN_RE.test(material.token ?? "")) {
    throw new KubeadmConfigError("joinMaterial.token", "is not a bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})", node.name);
  }
  if (!Array.isArray(material.caCertHashes) || material.caCertHashes.length === 0 || !material.caCertHashes.every((h) => HASH_RE.test(h))) {
    throw new KubeadmConfigError("joinMaterial.caCertHashes", "needs at least one sha256:<64 hex> hash", node.name);
  }
  if (material.certificateKey !== undefined && !CERT_KEY_RE.test(material.certificateKey)) {
    throw new KubeadmConfigError("joinMaterial.certificateKey", "is not 64 hex characters", node.name);
  }
  const doc: Record<string, unknown> = {
    apiVersion: KUBEADM_API_VERSION,
    kind: "JoinConfiguration",
    nodeRegistration: nodeRegistration(node, criSocket),
    discovery: {
      bootstrapToken: {
        apiServerEndpoint: material.apiServerEndpoint,
        token: material.token,
        caCertHashes: [...material.caCertHashes],
      },
    },
  };
  if (node.role === "control-plane") {
    doc.controlPlane = material.certificateKey !== undefined ? { certificateKey: material.certificateKey } : {};
  }
  return documents([doc]);
}
