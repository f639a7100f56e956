/**
 * Layer 2, the plan: a validated cluster turns into ONE ordered list of steps. The same list builds
 * the Pulumi resources (one `command.remote.Command` per step, named `<cluster>-<step id>`) and the
 * human-readable `plan` output, so what the preview says is what `up` does.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";

/** What a step does. Each action has one node script (components/scripts). */
export type StepAction =
  | "prepare"
  | "init"
  | "kubeconfig"
  | "join-token"
  | "join"
  | "cluster-config-read"
  | "cluster-config"
  | "drain"
  | "upgrade"
  | "kubelet-files"
  | "node-metadata";

/** One step of the plan. */
export interface Step {
  /** `<node>-<action>`; the resource is named `<cluster>-<id>`. Unique in a plan. */
  id: string;
  /** The node the step is about. */
  node: string;
  /** The node whose SSH connection runs it (the first control-plane node for cluster-side steps). */
  runsOn: string;
  action: StepAction;
  /** Ids of the steps that must have finished first. */
  after: string[];
  /**
   * Ids of steps that must also have finished first when the node was already in the cluster at the
   * last successful run: the rollout's one-node-at-a-time chain. A node new to the cluster is made at
   * the target version and gate, so its steps need not wait in that line.
   */
  rolloutAfter?: string[];
  /** What it does, in plain words. */
  summary: string;
}

/** Options of the plan. */
export interface PlanOptions {
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
  /** Workers cordoned/upgraded/migrated at the same time, at most. Default 1. */
  maxUnavailableWorkers?: number;
  /** The version the cluster runs now, when known (the stack's last outputs); undefined for a new cluster. */
  fromVersion?: string;
}

/** `<node>-<action>`. */
export function stepId(node: string, action: StepAction): string {
  return `${node}-${action}`;
}

function socketWords(node: ValidNode): string {
  return node.criSocket !== undefined ? `declared ${node.criSocket}` : "detected on the node as kubeadm does";
}

function modeWords(cluster: ValidCluster): string {
  return cluster.nodeLocalCriSocket
    ? "NodeLocalCRISocket in effect: instance-config.yaml, no --container-runtime-endpoint flag, no cri-socket annotation"
    : "NodeLocalCRISocket not in effect: --container-runtime-endpoint flag and cri-socket annotation, no instance-config.yaml";
}

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: must be a whole number >= ${min}, got ${value}`);
  return value;
}

function gateWords(cluster: ValidCluster): string {
  return cluster.nodeLocalCriSocket ? "NodeLocalCRISocket in effect" : "NodeLocalCRISocket not in effect";
}

/**
 * The plan of the cluster, in an order that respects every `after`. One plan serves a new cluster, a
 * growing one, an upgrade and a gate toggle: every step is idempotent and does nothing when its node is
 * already as wanted, and a changed version or gate changes the inputs of exactly the steps that must
 * run again (never their `triggers`: nothing is replaced).
 *
 * Provisioning:
 * 1. `prepare` on every node, with no dependency (they overlap with everything before init);
 * 2. `init` on the first control-plane node, then `kubeconfig` there;
 * 3. each other control-plane node: `join-token` (fresh join material, made on the first control-plane
 *    node) then `join`, one node after another (kubeadm adds control-plane members one at a time);
 * 4. workers after the last control-plane join, side by side, at most `maxConcurrentJoins` at once;
 *    their tokens (no certificate key) are made right after init, off that chain.
 *
 * Rollout (runs for real only when the version or the gate changes; on a new node each step only
 * records and reports):
 * 5. `cluster-config-read` then `cluster-config` on the first control-plane node: featureGates in the
 *    kubeadm-config ConfigMap (optimistic concurrency);
 * 6. node by node, control-plane nodes one at a time, then workers at most `maxUnavailableWorkers` at
 *    once (this line, `rolloutAfter`, holds for nodes already in the cluster; a new node's steps follow
 *    its own join): `drain` (workers, kubectl on the first control-plane node, only when the node's kubelet is not
 *    at the target), `upgrade` (install step, `kubeadm upgrade apply` on the first control-plane node /
 *    `upgrade node` elsewhere, kubelet restart; then the node's kubelet files are read), `kubelet-files`
 *    (the files as the version's kubeadm leaves them, backed up and replaced atomically, kubelet restarted
 *    and checked on a change), `node-metadata` (uncordon, labels, cri-socket annotation).
 *
 * @throws Error when the cluster has no control-plane node or an option is not a whole number >= 1.
 */
export function buildPlan(cluster: ValidCluster, options: PlanOptions = {}): Step[] {
  const joinWindow = wholeNumber("maxConcurrentJoins", options.maxConcurrentJoins ?? 10, 1);
  const workerWindow = wholeNumber("maxUnavailableWorkers", options.maxUnavailableWorkers ?? 1, 1);
  const first = cluster.controlPlane[0];
  if (first === undefined) throw new Error("nodes: no control-plane node");
  const cp1 = first.name;
  const to = cluster.version.text;
  const from = options.fromVersion;
  const change = from !== undefined && from !== to ? `${from} to ${to}` : `at ${to}`;
  const steps: Step[] = [];
  const add = (node: string, runsOn: string, action: StepAction, after: string[], summary: string, rolloutAfter?: string[]) =>
    steps.push({ id: stepId(node, action), node, runsOn, action, after, summary, ...(rolloutAfter?.length ? { rolloutAfter } : {}) });

  for (const node of cluster.nodes) {
    add(node.name, node.name, "prepare", [],
      `check kubeadm is installed and the CRI socket (${socketWords(node)}); several sockets with none declared fail as kubeadm does`);
  }
  add(cp1, cp1, "init", [stepId(cp1, "prepare")], `kubeadm init ${to} (${modeWords(cluster)}), once`);
  add(cp1, cp1, "kubeconfig", [stepId(cp1, "init")], "read the admin kubeconfig (secret)");

  let previous = stepId(cp1, "init");
  for (const node of cluster.controlPlane.slice(1)) {
    add(node.name, cp1, "join-token", [previous],
      "make fresh join material: bootstrap token, CA certificate hash, certificate key (secret)");
    add(node.name, node.name, "join", [stepId(node.name, "prepare"), stepId(node.name, "join-token")],
      `kubeadm join --control-plane ${to}, once`);
    previous = stepId(node.name, "join");
  }
  // A worker's token (no certificate key) can be made as soon as the cluster exists, off the chain of
  // control-plane joins; the join itself waits for that chain and for the join window.
  cluster.workers.forEach((node, i) => {
    add(node.name, cp1, "join-token", [stepId(cp1, "init")], "make fresh join material: bootstrap token, CA certificate hash (secret)");
    const waitFor = cluster.workers[i - joinWindow];
    add(node.name, node.name, "join",
      [stepId(node.name, "prepare"), stepId(node.name, "join-token"), previous, ...(waitFor !== undefined ? [stepId(waitFor.name, "join")] : [])],
      `kubeadm join ${to}, once`);
  });

  const gate = cluster.kubeadmFeatureGates.NodeLocalCRISocket;
  add(cp1, cp1, "cluster-config-read", [stepId(cp1, "init")], "read the kubeadm-config ConfigMap (ClusterConfiguration, resourceVersion)");
  add(cp1, cp1, "cluster-config", [stepId(cp1, "cluster-config-read")],
    gate === undefined
      ? "kubeadm-config: no featureGates.NodeLocalCRISocket entry (the version's default applies); replace only if it must change"
      : `kubeadm-config: featureGates.NodeLocalCRISocket=${gate}; replace only if it must change (optimistic concurrency)`);

  const unitEnd = (name: string) => stepId(name, "node-metadata");
  const unit = (node: ValidNode, after: string[], rolloutAfter: string[]) => {
    const made = node.name === cp1 ? stepId(cp1, "init") : stepId(node.name, "join");
    let start = [made, ...after];
    let chain = rolloutAfter;
    if (node.role === "worker") {
      add(node.name, cp1, "drain", start,
        `cordon and drain (if its kubelet is not at ${to}; a failed drain stops the rollout here, the node stays cordoned)`, chain);
      start = [stepId(node.name, "drain")];
      chain = [];
    }
    const upgrade = node.name === cp1 ? `kubeadm upgrade apply ${to}` : "kubeadm upgrade node";
    add(node.name, node.name, "upgrade", start,
      `${change}: if the node is not at ${to}: install step, ${upgrade}, restart the kubelet and check it; then read the kubelet files`, chain);
    add(node.name, node.name, "kubelet-files", [stepId(node.name, "upgrade")],
      cluster.nodeLocalCriSocket
        ? `${gateWords(cluster)}: instance-config.yaml with the node's endpoint, config.yaml containerRuntimeEndpoint, no --container-runtime-endpoint in kubeadm-flags.env (backup, atomic replace; kubelet restarted and checked only on a change, backups restored if it fails)`
        : `${gateWords(cluster)}: --container-runtime-endpoint in kubeadm-flags.env, no instance-config.yaml (backup, atomic replace; kubelet restarted and checked only on a change, backups restored if it fails)`);
    const labels = Object.keys(node.labels).length;
    add(node.name, cp1, "node-metadata", [stepId(node.name, "kubelet-files")],
      `${node.role === "worker" ? "uncordon; " : ""}${labels > 0 ? `set ${labels} label(s); ` : ""}${cluster.nodeLocalCriSocket ? "remove" : "set"} the kubeadm.alpha.kubernetes.io/cri-socket annotation`);
  };
  unit(first, [stepId(cp1, "cluster-config")], []);
  let last = unitEnd(cp1);
  for (const node of cluster.controlPlane.slice(1)) {
    unit(node, [], [last]);
    last = unitEnd(node.name);
  }
  const lastControlPlane = last;
  cluster.workers.forEach((node, i) => {
    const waitFor = cluster.workers[i - workerWindow];
    unit(node, [], [lastControlPlane, ...(waitFor !== undefined ? [unitEnd(waitFor.name)] : [])]);
  });
  return steps;
}
