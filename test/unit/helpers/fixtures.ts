/** Cluster args used across the component tests: 3 control-plane nodes, 2 workers (one CRI-O). */
import type { ClusterArgs, NodeArgs, NodeRole } from "../../../components";
import type { StepSettings } from "../../../components/steps/kind";
import { SECRETS } from "./mocks";

/** Step settings for rendering a kind's scripts directly (defaults, install commands with `{version}`). */
export const STEP_SETTINGS: StepSettings = {
  joinTokenTtl: "2h0m0s",
  kubeletSettleSeconds: 10,
  drainTimeoutSeconds: 300,
  maxUnavailableWorkers: 1,
  kubeadmInstall: () => "apt-get install -y kubeadm={version}-*",
  kubeletInstall: () => "apt-get install -y kubelet={version}-* kubectl={version}-*",
};

export const CONTAINERD = "unix:///run/containerd/containerd.sock";
export const CRIO = "unix:///var/run/crio/crio.sock";

/** A well-formed ssh-ed25519 public key (its 32 key bytes all `i`), as `connection.hostKey` takes it. */
export function hostKey(i: number): string {
  const field = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([field(Buffer.from("ssh-ed25519")), field(Buffer.alloc(32, i))]).toString("base64")}`;
}

export function node(name: string, role: NodeRole, i: number, extra: Partial<NodeArgs> = {}): NodeArgs {
  return { name, role, host: `10.0.0.${i}`, hostKey: hostKey(i), ...extra };
}

/** The standard test cluster; `overrides` replace top-level args. */
export function clusterArgs(overrides: Partial<ClusterArgs> = {}): ClusterArgs {
  return {
    kubernetesVersion: "v1.33.2",
    controlPlaneEndpoint: "k8s.example.internal:6443",
    ssh: { privateKey: SECRETS.privateKey },
    kubeletSettleSeconds: 0,
    nodes: [
      node("cp1", "control-plane", 1, { criSocket: CONTAINERD }),
      node("cp2", "control-plane", 2, { criSocket: CONTAINERD }),
      node("cp3", "control-plane", 3),
      node("w1", "worker", 4, { criSocket: CONTAINERD, labels: { tier: "web" } }),
      node("w2", "worker", 5, { criSocket: CRIO }),
    ],
    ...overrides,
  };
}
