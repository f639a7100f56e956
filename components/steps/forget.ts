/**
 * Step kind `forget`, on the first control-plane node for a worker whose machine is gone (`gone: true`):
 * delete its Node object, with nothing run on the machine. kubeadm's documented removal (drain, `kubeadm
 * reset` on the node, delete the Node) needs the machine; without it the Node is all that is left in
 * the cluster (its pods are removed with it by the garbage collector). The node's own steps are kept in
 * the state unchanged and marked to be retained on delete, so taking the entry out of the stack later
 * removes them from the state without running their deletes (which would dial the machine for ever).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { KUBECTL } from "../scripts/kubectl";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** `kubectl delete node <node>`, when the cluster has it. */
export function forgetScripts(node: string): StepScripts {
  const create = renderScript(node, [
    `if pk_node_registered ${shellQuote(node)}; then`,
    `  ${KUBECTL} delete node ${shellQuote(node)} >&2`,
    `  echo "Node deleted; nothing ran on the machine"`,
    `else`,
    `  echo "no such Node"`,
    `fi`,
  ]);
  return { create, update: create };
}

/** `forget`: the Node object of a worker whose machine is gone. */
export const forget: StepKind = {
  action: "forget",
  summary: () => "the machine is gone: delete its Node object (nothing runs on the machine; its other steps are kept in the state and retained on delete)",
  scripts: ({ node }) => forgetScripts(node.name),
};
