/**
 * Step kind `kubeconfig`, on the first control-plane node: read the admin kubeconfig kubeadm wrote (the
 * component's secret `kubeconfig` output).
 */
import { renderScript } from "../scripts/script";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** Print the admin kubeconfig of the first control-plane node (secret stdout). */
export function kubeconfigScripts(node: string): StepScripts {
  return {
    create: renderScript(node, [
      `[ -f /etc/kubernetes/admin.conf ] || pk_fail "no /etc/kubernetes/admin.conf: kubeadm init has not run"`,
      `cat /etc/kubernetes/admin.conf`,
    ]),
  };
}

/** `kubeconfig`: the admin kubeconfig, secret. */
export const kubeconfig: StepKind = {
  action: "kubeconfig",
  summary: () => "read the admin kubeconfig (secret)",
  scripts: ({ node }) => kubeconfigScripts(node.name),
  secretOutput: true,
};
