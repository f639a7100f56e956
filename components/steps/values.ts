/**
 * What a step shows of itself at the head of its stdin (`stdinWithValues`): a title naming the step
 * and its node, and the values of its kind's `shows`, in kubeadm's words. `pulumi preview --diff`
 * shows a changed value there as one changed line; the scripts are hidden from the diff.
 */
import type { ShownValue, StepContext } from "./kind";

/** The title and values of a step. */
export interface StepValues {
  /** `pulumi-kubeadm step upgrade on node w-1`; a join wave's step: `pulumi-kubeadm step join-material of join wave workers_1 on node cp-1`, a rollout batch's `... drain of rollout batch batch_1 ...`. */
  title: string;
  /** `[name, value]`, in the kind's `shows` order. */
  values: Array<[string, string]>;
}

/**
 * The step's title and shown values.
 * @param endpoint the node's resolved CRI endpoint. The prepare step (which reports the endpoint)
 *   shows the declared one, or `detected on the node`.
 */
export function stepValues(ctx: StepContext, endpoint: string): StepValues {
  const { cluster, node, step } = ctx;
  const value: Record<ShownValue, () => string> = {
    kubernetesVersion: () => cluster.version.text,
    criSocket: () => (step.kind.endpointFrom !== undefined ? (node.criSocket ?? "detected on the node") : endpoint),
    NodeLocalCRISocket: () => `${cluster.nodeLocalCriSocket}`,
  };
  return {
    title: step.group !== undefined ? `pulumi-kubeadm step ${step.action} of ${step.group.kind} ${step.group.id} on node ${node.name}` : `pulumi-kubeadm step ${step.action} on node ${node.name}`,
    values: (step.kind.shows ?? []).map((k) => [k, value[k]()]),
  };
}
