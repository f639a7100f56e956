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
  /** What it does, in plain words. */
  summary: string;
}

/** Options of the plan. */
export interface PlanOptions {
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
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

/**
 * The provisioning plan of a new (or growing) cluster, in an order that respects every `after`:
 * 1. `prepare` on every node, with no dependency (they overlap with everything before init);
 * 2. `init` on the first control-plane node, then `kubeconfig` there;
 * 3. each other control-plane node: `join-token` (fresh join material, made on the first control-plane
 *    node) then `join`, one node after another (kubeadm adds control-plane members one at a time);
 * 4. workers after the last control-plane join, side by side, at most `maxConcurrentJoins` at once;
 * 5. on each node after its init/join: `kubelet-files` (the files as the version's kubeadm leaves them)
 *    and `node-metadata` (labels and the cri-socket annotation, with kubectl on the first control-plane node).
 *
 * @throws Error when the cluster has no control-plane node or maxConcurrentJoins is not a whole number >= 1.
 */
export function buildProvisionPlan(cluster: ValidCluster, options: PlanOptions = {}): Step[] {
  const window = options.maxConcurrentJoins ?? 10;
  if (!Number.isInteger(window) || window < 1) {
    throw new Error(`maxConcurrentJoins: must be a whole number >= 1, got ${window}`);
  }
  const first = cluster.controlPlane[0];
  if (first === undefined) throw new Error("nodes: no control-plane node");
  const cp1 = first.name;
  const version = cluster.version.text;
  const steps: Step[] = [];
  const add = (node: string, runsOn: string, action: StepAction, after: string[], summary: string) =>
    steps.push({ id: stepId(node, action), node, runsOn, action, after, summary });

  for (const node of cluster.nodes) {
    add(node.name, node.name, "prepare", [],
      `check kubeadm is installed and the CRI socket (${socketWords(node)}); several sockets with none declared fail as kubeadm does`);
  }
  add(cp1, cp1, "init", [stepId(cp1, "prepare")],
    `kubeadm init ${version} (${modeWords(cluster)}), once`);
  add(cp1, cp1, "kubeconfig", [stepId(cp1, "init")], "read the admin kubeconfig (secret)");

  const joined: string[] = [];
  let previous = stepId(cp1, "init");
  for (const node of cluster.controlPlane.slice(1)) {
    add(node.name, cp1, "join-token", [previous],
      "make fresh join material: bootstrap token, CA certificate hash, certificate key (secret)");
    add(node.name, node.name, "join", [stepId(node.name, "prepare"), stepId(node.name, "join-token")],
      `kubeadm join --control-plane ${version}, once`);
    previous = stepId(node.name, "join");
    joined.push(node.name);
  }
  cluster.workers.forEach((node, i) => {
    const after = [previous];
    const waitFor = cluster.workers[i - window];
    if (waitFor !== undefined) after.push(stepId(waitFor.name, "join"));
    add(node.name, cp1, "join-token", after, "make fresh join material: bootstrap token, CA certificate hash (secret)");
    add(node.name, node.name, "join", [stepId(node.name, "prepare"), stepId(node.name, "join-token")],
      `kubeadm join ${version}, once`);
  });

  for (const node of cluster.nodes) {
    const made = node.name === cp1 ? stepId(cp1, "init") : stepId(node.name, "join");
    add(node.name, node.name, "kubelet-files", [made],
      cluster.nodeLocalCriSocket
        ? "instance-config.yaml with the node's endpoint, config.yaml containerRuntimeEndpoint set, --container-runtime-endpoint removed from kubeadm-flags.env (backup, atomic replace; kubelet restarted only on a change)"
        : "--container-runtime-endpoint in kubeadm-flags.env, no instance-config.yaml (backup, atomic replace; kubelet restarted only on a change)");
    const labels = Object.keys(node.labels).length;
    add(node.name, cp1, "node-metadata", [stepId(node.name, "kubelet-files")],
      `${labels > 0 ? `set ${labels} label(s); ` : ""}${cluster.nodeLocalCriSocket ? "remove" : "set"} the kubeadm.alpha.kubernetes.io/cri-socket annotation`);
  }
  return steps;
}
