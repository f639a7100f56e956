/**
 * Step kind `kubeconfig`, on the first control-plane node: read the admin kubeconfig kubeadm wrote (the
 * component's secret `kubeconfig` output).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/**
 * Print the admin kubeconfig of the first control-plane node (secret stdout). `version` is part of the
 * text, so the step reads the file again after each upgrade: `kubeadm upgrade apply` renews the admin
 * certificate (`--certificate-renewal`, on by default) and the old one stops working when it expires.
 */
export function kubeconfigScripts(node: string, version: string): StepScripts {
  const create = renderScript(node, [
    `: read after the upgrade to ${shellQuote(version)}`,
    `[ -f /etc/kubernetes/admin.conf ] || pk_fail "no /etc/kubernetes/admin.conf: kubeadm init has not run"`,
    `cat /etc/kubernetes/admin.conf`,
  ]);
  return { create, update: create };
}

/** `kubeconfig`: the admin kubeconfig, secret. */
export const kubeconfig: StepKind = {
  action: "kubeconfig",
  shows: ["kubernetesVersion"],
  summary: ({ cluster }) => `read the admin kubeconfig (secret), again after every upgrade (upgrade apply renews its certificate; at ${cluster.version.text})`,
  scripts: ({ cluster, node }) => kubeconfigScripts(node.name, cluster.version.text),
  secretOutput: true,
};
