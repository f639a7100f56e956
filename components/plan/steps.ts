/**
 * Layer 4, the plan: a validated cluster turns into ONE ordered list of steps, each of a step kind
 * (components/steps). The same list builds the Pulumi resources (one `command.remote.Command` per step,
 * named `<cluster>-<step id>`) and the human-readable `plan` output, so what the preview says is what
 * `up` does. This file decides only which steps exist and their order; what a step does is its kind's.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";
import type { Step, StepKind } from "../steps/kind";
import { stepId } from "../steps/ids";
import { prepare } from "../steps/prepare";
import { init } from "../steps/init";
import { kubeconfig } from "../steps/kubeconfig";
import { joinToken } from "../steps/joinToken";
import { join } from "../steps/join";
import { clusterConfig, clusterConfigRead } from "../steps/clusterConfig";
import { drain } from "../steps/drain";
import { upgrade } from "../steps/upgrade";
import { kubelet } from "../steps/kubelet";
import { kubeletFiles } from "../steps/kubeletFiles";
import { nodeMetadata } from "../steps/nodeMetadata";
import { forget } from "../steps/forget";

export type { Step, StepAction } from "../steps/kind";
export { stepId } from "../steps/ids";

/** Options of the plan. */
export interface PlanOptions {
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
  /** Workers cordoned/upgraded/migrated at the same time, at most. Default 1. */
  maxUnavailableWorkers?: number;
  /**
   * The version the cluster ran at the last `pulumi up`, when the component knows it (its own record in
   * the state, read at preview); only for the plan's words (`v1.33.2 to v1.34.2`). The order never
   * depends on it.
   */
  fromVersion?: string;
}

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: must be a whole number >= ${min}, got ${value}`);
  return value;
}

/**
 * The plan of the cluster, in an order that respects every `after`. One plan serves a new cluster, a
 * growing one, an upgrade and a gate toggle: every step is idempotent and decides on its node (or in
 * the cluster) whether there is anything to do, and a changed version or gate changes the inputs of
 * exactly the steps that must run again (never their `triggers`: nothing is replaced). The order is
 * the same whatever the caller passes or the stack recorded, in kubeadm's documented order:
 *
 * 1. `prepare` on every node, with no dependency (they overlap; they change nothing, report the node's
 *    socket and check kubeadm's version and skew rules there), all before anything changes;
 * 2. the first control-plane node: `init` (once), `cluster-config-read` and `cluster-config` (featureGates
 *    in the kubeadm-config ConfigMap), then its rollout unit: `upgrade` (the kubeadm package and
 *    `kubeadm upgrade apply`, before anything else in the cluster upgrades), `drain` (a new kubelet version
 *    or a runtime switch), `kubelet` (the kubelet and kubectl packages, restart, check), `kubelet-files`,
 *    `node-metadata` (uncordon what this component cordoned); then `kubeconfig` (read after the upgrade,
 *    which renews the admin certificate);
 * 3. each other control-plane node, one at a time, each after the previous one's unit: `join-token`
 *    (made on the first control-plane node), `join` (once), then its unit (`kubeadm upgrade node`): a
 *    control-plane node added in the same `up` as a version change joins a control plane already at
 *    the target;
 * 4. workers after the last control-plane unit: `join-token`, `join` (at most `maxConcurrentJoins` at
 *    once), then their units, at most `maxUnavailableWorkers` at once: `upgrade`, `drain` (a new
 *    kubelet version or a runtime switch), `kubelet`, `kubelet-files`, `node-metadata`.
 *
 * On a node that is already as wanted (a new node joins at the target) every unit step does nothing.
 * A worker whose machine is gone (`gone`) keeps its steps, frozen (nothing runs, retained on delete), and
 * gets `forget` (its Node object deleted from the first control-plane node).
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
  const change = from !== undefined && from !== to ? `${from} to ${to}` : `to ${to}`;
  const steps: Step[] = [];
  const add = (node: ValidNode, runsOn: string, kind: StepKind, after: string[]): string => {
    const frozen = node.gone && kind !== forget;
    steps.push({
      id: stepId(node.name, kind.action),
      node: node.name,
      runsOn,
      action: kind.action,
      kind,
      // A gone machine's steps keep their place (and their resources) but wait for nothing and run nothing.
      after: frozen ? [] : after,
      summary: frozen ? "the machine is gone: kept in the state as it is, nothing runs, retained on delete" : kind.summary({ cluster, node, firstControlPlane: cp1, change }),
      ...(frozen ? { frozen } : {}),
    });
    return stepId(node.name, kind.action);
  };
  /** A node's rollout unit after `after` (kubeadm's order: kubeadm, drain, kubelet); returns the id of its last step. */
  const unit = (node: ValidNode, after: string[]): string => {
    const upgraded = add(node, node.name, upgrade, after);
    const drained = add(node, cp1, drain, [upgraded]);
    const kubeletDone = add(node, node.name, kubelet, [drained]);
    const files = add(node, node.name, kubeletFiles, [kubeletDone]);
    return add(node, cp1, nodeMetadata, [files]);
  };

  // Every node's prepare (which checks kubeadm's version rules there) before anything changes.
  const prepared = cluster.nodes.map((node) => add(node, node.name, prepare, []));
  const made = add(first, cp1, init, prepared.filter((_, i) => !cluster.nodes[i]?.gone));
  const read = add(first, cp1, clusterConfigRead, [made]);
  const configured = add(first, cp1, clusterConfig, [read]);
  let last = unit(first, [configured]);
  add(first, cp1, kubeconfig, [last]);

  for (const node of cluster.controlPlane.slice(1)) {
    const material = add(node, cp1, joinToken, [last]);
    const joined = add(node, node.name, join, [stepId(node.name, "prepare"), material]);
    last = unit(node, [joined]);
  }
  const controlPlaneDone = last;
  cluster.workers.forEach((node, i) => {
    const material = add(node, cp1, joinToken, [controlPlaneDone]);
    const waitJoin = cluster.workers[i - joinWindow];
    const joined = add(node, node.name, join, [
      stepId(node.name, "prepare"),
      material,
      controlPlaneDone,
      ...(waitJoin !== undefined ? [stepId(waitJoin.name, "join")] : []),
    ]);
    const waitUnit = cluster.workers[i - workerWindow];
    unit(node, [joined, ...(waitUnit !== undefined ? [stepId(waitUnit.name, "node-metadata")] : [])]);
    if (node.gone) add(node, cp1, forget, [controlPlaneDone]);
  });
  return steps;
}
