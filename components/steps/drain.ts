/**
 * Step kind `drain`, on the first control-plane node for each worker, in the rollout line: cordon and
 * drain the worker before its kubelet changes (kubeadm's documented upgrade order).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { KUBECTL, drainCommand } from "../scripts/kubectl";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** What the drain step needs. */
export interface DrainInput {
  node: string;
  /** Target version, `v1.34.2`. */
  version: string;
  timeoutSeconds: number;
  /** kubectl drain --grace-period; undefined = each pod's own. */
  gracePeriodSeconds?: number;
}

/**
 * On the first control-plane node: when the Node's kubelet is not at the target version, drain it
 * (`kubectl drain` cordons first). A failed drain (a PodDisruptionBudget, the timeout) fails the step naming the node and
 * kubectl's reason; the node stays cordoned and the rollout stops there.
 */
export function drainScripts(input: DrainInput): StepScripts {
  const node = shellQuote(input.node);
  const create = renderScript(input.node, [
    `have=$(${KUBECTL} get node ${node} -o jsonpath='{.status.nodeInfo.kubeletVersion}') || pk_fail "cannot read the Node"`,
    `if [ "$have" = ${shellQuote(input.version)} ]; then echo "kubelet at ${input.version}: no drain"; exit 0; fi`,
    `err=$(mktemp); trap 'rm -f "$err"' EXIT`,
    `if ! ${drainCommand(input.node, input.timeoutSeconds, input.gracePeriodSeconds)} >&2 2>"$err"; then`,
    `  cat "$err" >&2`,
    `  pk_fail "drain failed, the node stays cordoned and the rollout stops here: $(tail -n 1 "$err")"`,
    `fi`,
    `echo "drained"`,
  ]);
  return { create, update: create };
}

/** `drain`: cordon and drain a worker whose kubelet is not at the target version. */
export const drain: StepKind = {
  action: "drain",
  summary: ({ cluster }) =>
    `cordon and drain (if its kubelet is not at ${cluster.version.text}; a failed drain stops the rollout here, the node stays cordoned)`,
  scripts: ({ cluster, node, settings }) =>
    drainScripts({
      node: node.name,
      version: cluster.version.text,
      timeoutSeconds: settings.drainTimeoutSeconds,
      gracePeriodSeconds: settings.drainGracePeriodSeconds,
    }),
};
