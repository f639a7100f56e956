/**
 * Step kind `kubelet`, in a node's rollout unit after `upgrade` and `drain` (kubeadm's documented
 * upgrade order): when the node is not at the target, the kubelet and kubectl packages
 * (`kubeletInstallCommand`); then the kubelet files made what this version's kubeadm leaves for the gate
 * and the node's endpoint (`kubeletFileChanges`, computed from the files the node's `upgrade` step read
 * after its `kubeadm upgrade`; backup, compare-and-swap, atomic replace); then, only when a file changed
 * (in this run, or in an earlier run that died before it checked the kubelet) or a new kubelet was
 * installed, one restart and health check of the kubelet (and the wait for the Node to be Ready again if
 * it was), the backups restored if it is unhealthy, and the node's new version recorded. The kubelet is
 * thus restarted once, with files that match the version and the gate (an upgrade and a gate toggle in
 * the same `up` never start a kubelet on half-made files). An unhealthy kubelet gets only this step's own
 * changes restored (see {@link kubeletScripts}: the `upgrade` step's pre-upgrade file stays).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { renderInstallCommand } from "../scripts/install";
import { encodeFileChanges, parseFileSnapshot } from "../scripts/files";
import { kubeletFileChanges } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";
import { stepId } from "./ids";
import { gateWords } from "./words";

/**
 * The kubelet step's own journal and backups (lib.sh's `pk_kubelet_step` keeps them there), under the node's state dir (/var/lib/pulumi-kubeadm):
 * `kubelet/pending` and `kubelet/backup/<UTC timestamp>/<path>`, apart from the node's journal
 * (`pending`, `backup/`) where the `upgrade` step journals its pre-upgrade changes, so that an unhealthy
 * kubelet restores only what this step changed.
 */
export const KUBELET_JOURNAL_DIR = "kubelet";

/** What the kubelet step needs. */
export interface KubeletInput {
  node: string;
  /** Target version, `v1.34.2`. */
  version: string;
  /** The kubelet and kubectl install command with the version substituted (bash), or undefined for none. */
  install?: string;
  /** Seconds the kubelet must stay active after a restart to count as healthy (whole number >= 0). */
  settleSeconds: number;
  /**
   * NodeLocalCRISocket in effect: first fail, changing nothing, when a --container-runtime-endpoint is
   * set outside kubeadm-flags.env (a kubelet systemd drop-in, /etc/default/kubelet,
   * /etc/sysconfig/kubelet), naming the file: the kubelet would ignore the node-local socket.
   */
  nodeLocalCriSocket: boolean;
}

/**
 * The kubelet step's script: its values and one call of lib.sh's `pk_kubelet_step`, which does 2 to 4.
 * Stdin: the file changes (`encodeFileChanges`, read by `pk_apply_files`).
 * 1. (gate in effect) `pk_no_endpoint_flag_elsewhere`;
 * 2. when the node is not at the target (`pk_node_version`) and no earlier run installed this target's
 *    kubelet ($PK_STATE_DIR/kubelet-upgrade): the install command, then the target noted there (a re-run
 *    after a failure further on installs nothing again);
 * 3. `pk_apply_files` into the step's own journal and backups, {@link KUBELET_JOURNAL_DIR} (a file
 *    already as wanted is skipped, so a re-run after the files were replaced finishes against the same
 *    snapshot; a file neither as read nor as wanted is refused, changing nothing: the files are read anew
 *    by replacing the node's `upgrade` step, `pulumi up --replace`);
 * 4. when changes are journaled (this step's, or the `upgrade` step's pre-upgrade instance-config.yaml in
 *    the node's journal, `pk_files_pending`) or a kubelet was installed: restart and check the kubelet
 *    once; unhealthy: restore the files THIS step changed (its own journal: the upgrade step's changes
 *    stay), restart again and fail naming the node; then wait up to 120 s for a Node that was Ready to be
 *    Ready again (after a new kubelet), record the version, forget both journals and the note. Prints
 *    one line (and nothing more on success): `files changed: <files this run changed>; kubelet upgraded to
 *    <version>, restarted and healthy`, `...; kubelet restarted and healthy` (its files changed: this
 *    step's, or the upgrade step's files that kubeadm read), or `files changed: 0; kubelet not restarted`.
 *
 * Why the restore leaves the upgrade step's changes: `kubeadm upgrade` already ran on the files the
 * upgrade step made (it read instance-config.yaml and wrote config.yaml from it), so those files as
 * upgrade and kubeadm left them are what this kubeadm version expects and what its kubelet runs with;
 * undoing them would leave the node without the instance-config.yaml kubeadm's version needs, and the
 * re-run (which runs only this step, with the same stdin computed from the snapshot taken after kubeadm,
 * in which that file was already right) would never put it back. A re-run after the failure thus finds
 * exactly the files its stdin was computed from, and ends with every file as wanted.
 * @throws Error when settleSeconds is not a whole number >= 0.
 */
export function kubeletScripts(input: KubeletInput): StepScripts {
  const { node, settleSeconds } = input;
  if (!Number.isInteger(settleSeconds) || settleSeconds < 0) {
    throw new Error(`kubeletSettleSeconds: must be a whole number >= 0, got ${settleSeconds}`);
  }
  const create = renderScript(node, [
    ...(input.nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    ["pk_kubelet_step", shellQuote(node), shellQuote(input.version), String(settleSeconds), ...(input.install !== undefined ? [shellQuote(input.install)] : [])].join(" "),
  ]);
  return { create, update: create };
}

/** `kubelet`: the kubelet and kubectl at the target, its files as this version and gate need, restarted once and checked. */
export const kubelet: StepKind = {
  action: "kubelet",
  // The node's endpoint changes this step's stdin (the file changes) through the upgrade step's new
  // snapshot, not its script: shown on `upgrade`.
  shows: ["kubernetesVersion", "NodeLocalCRISocket"],
  summary: ({ cluster }) => {
    const files = cluster.nodeLocalCriSocket
      ? "instance-config.yaml with the node's endpoint, config.yaml containerRuntimeEndpoint, no --container-runtime-endpoint in kubeadm-flags.env"
      : "--container-runtime-endpoint in kubeadm-flags.env, no instance-config.yaml";
    return `if the node is not at ${cluster.version.text}: the kubelet and kubectl packages; ${gateWords(cluster)}: ${files} (from the files its upgrade step read; backup, atomic replace); the kubelet restarted and checked only on a change or a new kubelet, backups restored if it fails; the version recorded`;
  },
  scripts: ({ cluster, node, settings }) => {
    const template = settings.kubeletInstall(node.name);
    return kubeletScripts({
      node: node.name,
      version: cluster.version.text,
      install: template === undefined ? undefined : renderInstallCommand(template, cluster.version, "kubeletInstallCommand"),
      settleSeconds: settings.kubeletSettleSeconds,
      nodeLocalCriSocket: cluster.nodeLocalCriSocket,
    });
  },
  stdin: {
    reads: ({ node }) => [stepId(node.name, "upgrade")],
    // No snapshot: the upgrade step ran no command (its node joined at the target, `idleOnJoin`), so the
    // files were not read and nothing is changed (a change against an unread file would fail its compare-and-swap).
    render: ({ cluster, node }, v) => {
      const read = parseFileSnapshot(v.stdout(stepId(node.name, "upgrade")));
      return read.size === 0 ? "" : encodeFileChanges(kubeletFileChanges(cluster.nodeLocalCriSocket, v.endpoint, read));
    },
  },
  idleOnJoin: true,
};
