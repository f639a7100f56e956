/** A small validated cluster for the record and transition tests: two control-plane nodes, two workers. */
import { validateCluster } from "../../../components/kubeadm/validate";
import type { ClusterSpec } from "../../../components/kubeadm/types";

export const CONTAINERD = "unix:///run/containerd/containerd.sock";
export const CRIO = "unix:///var/run/crio/crio.sock";

/** `[name, role, criSocket?]` per node, hosts 10.0.0.1, .2, ... in order; the nodes named in `gone` marked `gone: true`. */
export function cluster(nodes: Array<[string, string, string?]>, version = "v1.34.2", gates?: Record<string, boolean>, gone: string[] = []) {
  const spec: ClusterSpec = {
    kubernetesVersion: version,
    controlPlaneEndpoint: "k8s.example.internal:6443",
    ...(gates ? { featureGates: gates } : {}),
    nodes: nodes.map(([name, role, criSocket], i) => ({ name, role, host: `10.0.0.${i + 1}`, ...(criSocket ? { criSocket } : {}), ...(gone.includes(name) ? { gone: true } : {}) })),
  };
  return validateCluster(spec);
}

export const base: Array<[string, string, string?]> = [
  ["cp-1", "control-plane", CONTAINERD],
  ["cp-2", "control-plane", CONTAINERD],
  ["worker-1", "worker", CONTAINERD],
  ["worker-2", "worker"],
];
