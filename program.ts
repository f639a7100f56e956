/**
 * The root program as a function: reads stack config and builds one Cluster, returning the stack
 * outputs. `index.ts` exports it for `pulumi up`; the lab runs the same function as an Automation API
 * inline program. Config keys (namespace `kubeadm`) are documented in README.md. `nodes`, `networking`,
 * `featureGates` and `kubeletConfiguration` are structured config read with requireObject/getObject
 * (Pulumi.yaml's schema has no object type) and validated by the component. The SSH private key is its
 * own secret key (`sshPrivateKey`): requireObject would decrypt a nested secure value without marking it
 * secret.
 *
 * The version the cluster runs now is read from this stack's own last outputs (a StackReference to
 * itself), so a preview can refuse a skipped minor or a downgrade and say "from X to Y".
 */
import * as pulumi from "@pulumi/pulumi";
import { Cluster, type NodeArgs, type Networking } from "./components";

/** Builds the stack's Cluster from config; resolves with the stack outputs. */
export async function clusterProgram(): Promise<Record<string, unknown>> {
  const config = new pulumi.Config();
  const self = new pulumi.StackReference(`${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`);

  const cluster = new Cluster(config.get("clusterName") ?? "kubeadm", {
    kubernetesVersion: config.require("kubernetesVersion"),
    nodes: config.requireObject<NodeArgs[]>("nodes"),
    controlPlaneEndpoint: config.get("controlPlaneEndpoint"),
    networking: config.getObject<Networking>("networking"),
    featureGates: config.getObject<Record<string, boolean>>("featureGates"),
    kubeletConfiguration: config.getObject<Record<string, unknown>>("kubeletConfiguration"),
    ssh: {
      user: config.get("sshUser"),
      privateKey: config.getSecret("sshPrivateKey"),
    },
    maxConcurrentJoins: config.getNumber("maxConcurrentJoins"),
    maxUnavailableWorkers: config.getNumber("maxUnavailableWorkers"),
    kubeletSettleSeconds: config.getNumber("kubeletSettleSeconds"),
    joinTokenTtl: config.get("joinTokenTtl"),
    drainTimeoutSeconds: config.getNumber("drainTimeoutSeconds"),
    drainGracePeriodSeconds: config.getNumber("drainGracePeriodSeconds"),
    installCommand: config.get("installCommand"),
    kubernetesProvider: config.getBoolean("kubernetesProvider"),
    currentKubernetesVersion: self.getOutput("kubernetesVersion") as pulumi.Output<string | undefined>,
    joined: self.getOutput("joined") as pulumi.Output<Record<string, string> | undefined>,
  });

  return {
    /** The admin kubeconfig (secret). */
    kubeconfig: cluster.kubeconfig,
    /** Per node: name, role, CRI endpoint, node-local or not. */
    nodes: cluster.nodes,
    /** The ordered steps, in plain words. */
    plan: cluster.plan,
    /** Per joined node, the join attempt that made it (so a failed join gets fresh material next time). */
    joined: cluster.joined,
    /** The version this deployment asked for; the next run's "from" version. */
    kubernetesVersion: cluster.kubernetesVersion,
  };
}
