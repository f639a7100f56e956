/**
 * Step kind `upgrade`, first of a node's rollout unit (kubeadm's documented upgrade order): report the
 * version the node runs now (for the `drain` decision), then, when the node is not at the target, the
 * kubeadm package (`kubeadmInstallCommand`) and `kubeadm upgrade apply` on the first control-plane node
 * or `kubeadm upgrade node` elsewhere, once; last, always, the kubelet files as they are now (as kubeadm
 * left them: `kubeadm upgrade` is what rewrites them, and `drain`, next, changes no file), for the
 * `drain` decision (the endpoint in use) and for the `kubelet` step, which changes them. The step's
 * inputs carry the gate state and the node's endpoint, so a gate toggle or a runtime switch without a
 * version change runs it again: it then only reports (no kubeadm). The kubelet and kubectl packages and
 * the kubelet restart come later, in the `kubelet` step, after the drain: a failed `kubeadm upgrade`
 * never leaves a kubelet newer than the API server. Safe on a re-run after a failure midway.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { encodeFileChanges } from "../scripts/files";
import { renderInstallCommand } from "../scripts/install";
import { preUpgradeFileChanges } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** What the upgrade step needs. */
export interface UpgradeInput {
  node: string;
  /** Target version, `v1.34.2`. */
  version: string;
  /** `kubeadm upgrade apply` (first control-plane node) or `kubeadm upgrade node`. */
  apply: boolean;
  /** The kubeadm install command for this node with the version substituted (bash), or undefined for none. */
  install?: string;
  /**
   * Plain words of the gate state and the node's endpoint: part of the text, so the node's files are
   * read again (for the `kubelet` step) when what they must hold changes without a version change.
   */
  wanted: string;
  /** NodeLocalCRISocket in effect: fail first, changing nothing, when a file outside kubeadm-flags.env sets the endpoint flag. */
  nodeLocalCriSocket: boolean;
}

/**
 * A call of lib.sh's `pk_upgrade_step`, after the wanted state (a comment) and, with the gate in effect,
 * `pk_no_endpoint_flag_elsewhere`. Prints `report=<a random id, new on every run>` (the drain step remembers which report it drained
 * for, so that it drains once per report: drain.ts) and `nodeVersion=<the version the node runs>`. Then, when the node is not at the target: check the
 * step is one kubeadm allows (one minor up, or a patch), apply the pre-upgrade file changes from stdin
 * (instance-config.yaml with the node's endpoint when the gate is in effect: `preUpgradeFileChanges`;
 * journaled in the node's journal until the `kubelet` step has checked the kubelet, and never undone by
 * it: `kubeadm upgrade` runs on that file, so it stays as kubeadm's version expects it), run the kubeadm
 * install command, and
 * `kubeadm upgrade apply <v> --yes` / `kubeadm upgrade node` once. Last, always, prints the kubelet
 * files as they are now (`pk-file` lines, `pk_snapshot`): after kubeadm, the files the `kubelet` step
 * changes. With NodeLocalCRISocket in effect it first fails, changing nothing, when a file outside
 * kubeadm-flags.env sets --container-runtime-endpoint (naming the file).
 */
export function upgradeScripts(input: UpgradeInput): StepScripts {
  const create = renderScript(input.node, [
    `: wanted ${shellQuote(input.wanted)}`,
    ...(input.nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    ["pk_upgrade_step", shellQuote(input.node), shellQuote(input.version), input.apply ? "yes" : "no", ...(input.install !== undefined ? [shellQuote(input.install)] : [])].join(" "),
  ]);
  return { create, update: create };
}

/** `upgrade`: kubeadm to the target on the node, once. */
export const upgrade: StepKind = {
  action: "upgrade",
  shows: ["kubernetesVersion", "criSocket", "NodeLocalCRISocket"],
  summary: ({ cluster, node, firstControlPlane, change }) => {
    const to = cluster.version.text;
    const kubeadm = node.name === firstControlPlane ? `kubeadm upgrade apply ${to}` : "kubeadm upgrade node";
    return `${change}: if the node is not at ${to}: the kubeadm package, ${kubeadm}; report the node's version and (then) its kubelet files`;
  },
  scripts: ({ cluster, node, settings }, endpoint) => {
    const template = settings.kubeadmInstall(node.name);
    return upgradeScripts({
      node: node.name,
      version: cluster.version.text,
      apply: node.name === cluster.controlPlane[0]?.name,
      install: template === undefined ? undefined : renderInstallCommand(template, cluster.version, "kubeadmInstallCommand"),
      wanted: `${cluster.nodeLocalCriSocket ? "node-local" : "legacy"} ${endpoint}`,
      nodeLocalCriSocket: cluster.nodeLocalCriSocket,
    });
  },
  scriptsUseEndpoint: true,
  // With the gate in effect, instance-config.yaml is made right before kubeadm reads it.
  stdin: { render: ({ cluster }, v) => encodeFileChanges(preUpgradeFileChanges(cluster.nodeLocalCriSocket, v.endpoint)) },
  dataOutput: true,
  idleOnJoin: true,
};
