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
import { kubeletFiles } from "../steps/kubeletFiles";
import { nodeMetadata } from "../steps/nodeMetadata";

export type { Step, StepAction } from "../steps/kind";
export { stepId } from "../steps/ids";

/** Options of the plan. */
export interface PlanOptions {
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
  /** Workers cordoned/upgraded/migrated at the same time, at most. Default 1. */
  maxUnavailableWorkers?: number;
  /** The version the cluster runs now, when known (the stack's last outputs); undefined for a new cluster. */
  fromVersion?: string;
}

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: must be a whole number >= ${min}, got ${value}`);
  return value;
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
 *    its own join): `drain` (workers), `upgrade`, `kubelet-files`, `node-metadata`.
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
  const add = (node: ValidNode, runsOn: string, kind: StepKind, after: string[], rolloutAfter?: string[]) =>
    steps.push({
      id: stepId(node.name, kind.action),
      node: node.name,
      runsOn,
      action: kind.action,
      kind,
      after,
      summary: kind.summary({ cluster, node, firstControlPlane: cp1, change }),
      ...(rolloutAfter?.length ? { rolloutAfter } : {}),
    });

  for (const node of cluster.nodes) add(node, node.name, prepare, []);
  add(first, cp1, init, [stepId(cp1, "prepare")]);
  add(first, cp1, kubeconfig, [stepId(cp1, "init")]);

  let previous = stepId(cp1, "init");
  for (const node of cluster.controlPlane.slice(1)) {
    add(node, cp1, joinToken, [previous]);
    add(node, node.name, join, [stepId(node.name, "prepare"), stepId(node.name, "join-token")]);
    previous = stepId(node.name, "join");
  }
  // A worker's token (no certificate key) can be made as soon as the cluster exists, off the chain of
  // control-plane joins; the join itself waits for that chain and for the join window.
  cluster.workers.forEach((node, i) => {
    add(node, cp1, joinToken, [stepId(cp1, "init")]);
    const waitFor = cluster.workers[i - joinWindow];
    add(node, node.name, join,
      [stepId(node.name, "prepare"), stepId(node.name, "join-token"), previous, ...(waitFor !== undefined ? [stepId(waitFor.name, "join")] : [])]);
  });

  add(first, cp1, clusterConfigRead, [stepId(cp1, "init")]);
  add(first, cp1, clusterConfig, [stepId(cp1, "cluster-config-read")]);

  const unitEnd = (name: string) => stepId(name, "node-metadata");
  const unit = (node: ValidNode, after: string[], rolloutAfter: string[]) => {
    const made = node.name === cp1 ? stepId(cp1, "init") : stepId(node.name, "join");
    let start = [made, ...after];
    let chain = rolloutAfter;
    if (node.role === "worker") {
      add(node, cp1, drain, start, chain);
      start = [stepId(node.name, "drain")];
      chain = [];
    }
    add(node, node.name, upgrade, start, chain);
    add(node, node.name, kubeletFiles, [stepId(node.name, "upgrade")]);
    add(node, cp1, nodeMetadata, [stepId(node.name, "kubelet-files")]);
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
