/**
 * The root program as a function: reads stack config and builds one Cluster, returning the stack
 * outputs. `index.ts` exports it for `pulumi up`; the lab runs the same function as an Automation API
 * inline program. Config keys (namespace `kubeadm`) are documented in README.md. `nodes`, `networking`,
 * `featureGates` and `kubeletConfiguration` are structured config read with requireObject/getObject
 * (Pulumi.yaml's schema has no object type) and validated by the component. The SSH private key is its
 * own secret key (`sshPrivateKey`): requireObject would decrypt a nested secure value without marking it
 * secret.
 *
 * The component needs nothing from the stack's last outputs: it keeps its own record in the state and
 * decides on the nodes and in the cluster what is new and what is already at the target.
 */
import * as pulumi from "@pulumi/pulumi";
import { Cluster, type NodeArgs, type Networking } from "./components";

/** Builds the stack's Cluster from config; resolves with the stack outputs. */
export async function clusterProgram(): Promise<Record<string, unknown>> {
  const config = new pulumi.Config();

  // Earlier names of the cluster: a rename with these keeps every resource (Pulumi aliases).
  const former = config.getObject<string[]>("formerClusterNames") ?? [];
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
    kubeadmInstallCommand: config.get("kubeadmInstallCommand"),
    installCommand: config.get("installCommand"),
    kubeletInstallCommand: config.get("kubeletInstallCommand"),
    kubernetesProvider: config.getBoolean("kubernetesProvider"),
  }, former.length > 0 ? { aliases: former.map((name) => ({ name })) } : undefined);

  return {
    /** The admin kubeconfig (secret). */
    kubeconfig: cluster.kubeconfig,
    /** Per node: name, role, CRI endpoint, node-local or not. */
    nodes: cluster.nodes,
    /** The ordered steps, in plain words. */
    plan: cluster.plan,
    /** The version this deployment asked for. */
    kubernetesVersion: cluster.kubernetesVersion,
  };
}
