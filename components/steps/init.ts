/**
 * Step kind `init`, on the first control-plane node: `kubeadm init --config` once, from a v1beta4
 * configuration on stdin. Delete: `kubeadm reset` with the node's CRI endpoint.
 */
import { renderInitConfiguration } from "../kubeadm/kubeadmConfig";
import { kubeadmOnceScripts, versionLine } from "../scripts/kubeadmRun";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";
import { modeWords } from "./words";

/**
 * `kubeadm init --config` on the first control-plane node, once: the configuration (not secret) on
 * stdin (its first line names the version, `versionLine`, recorded on the node after success) is
 * written to /etc/kubernetes/pulumi-kubeadm/kubeadm-init.yaml (0600) and kept. A re-run after
 * success does nothing; a re-run after a failed init first runs `kubeadm reset -f --cri-socket
 * <criSocket>` when the node had no kubeadm state before the first attempt. Delete: that reset, only
 * when this resource holds the last ownership claim on the node (`kubeadmOnceScripts`).
 * @param i.criSocket the node's normalised CRI endpoint (declared, or detected by the prepare step).
 * @param i.owner the resource's logical name; i.scope its step id.
 */
export function initScripts(i: { node: string; criSocket: string; scope: string; owner: string; formerOwners?: string[] }): StepScripts {
  return kubeadmOnceScripts({ ...i, action: "init", keepConfig: true });
}

/** `init`: the cluster is made here, once. */
export const init: StepKind = {
  action: "init",
  shows: ["kubernetesVersion", "criSocket", "NodeLocalCRISocket"],
  summary: ({ cluster }) => `kubeadm init ${cluster.version.text} (${modeWords(cluster)}), once`,
  scripts: ({ cluster, node, step, owner, formerOwners }, endpoint) =>
    initScripts({ node: node.name, criSocket: endpoint, scope: step.id, owner, formerOwners }),
  scriptsUseEndpoint: true,
  // The version travels in the configuration (its first line), not in the script: an upgrade leaves init alone.
  stdin: { render: ({ cluster, node }, v) => `${versionLine(cluster.version.text)}${renderInitConfiguration(cluster, node, v.endpoint)}` },
  runsOnce: true,
};
