/**
 * Step kind `kubelet-files`: apply the file changes the plan computed from what the node reported (stdin), with
 * backup, compare-and-swap and atomic replace; restart the kubelet only when a file changed (in this run,
 * or in an earlier run that died before it checked the kubelet), and if it is then unhealthy, restore
 * the backups, restart it again and fail naming the node.
 */
import { renderScript } from "../scripts/script";
import { encodeFileChanges, parseFileSnapshot } from "../scripts/files";
import type { StepScripts } from "../scripts/types";
import { kubeletFileChanges } from "../kubeadm/nodeFiles";
import type { StepKind } from "./kind";
import { stepId } from "./ids";
import { gateWords } from "./words";

/**
 * @param settleSeconds how long the kubelet must stay active after a restart to count as healthy.
 * @param nodeLocalCriSocket NodeLocalCRISocket in effect: first fail, changing nothing, when a
 *   --container-runtime-endpoint is set outside kubeadm-flags.env (a kubelet systemd drop-in,
 *   /etc/default/kubelet, /etc/sysconfig/kubelet), naming the file: the kubelet would ignore the
 *   node-local socket this step reports.
 * @throws Error when settleSeconds is not a whole number >= 0.
 */
export function kubeletFilesScripts(node: string, settleSeconds: number, nodeLocalCriSocket: boolean): StepScripts {
  if (!Number.isInteger(settleSeconds) || settleSeconds < 0) {
    throw new Error(`kubeletSettleSeconds: must be a whole number >= 0, got ${settleSeconds}`);
  }
  const create = renderScript(node, [
    ...(nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    `pk_apply_files`,
    `if pk_files_pending; then`,
    `  if ! pk_kubelet_healthy ${settleSeconds}; then`,
    `    why=$(systemctl status kubelet 2>&1 | tail -n 5 || true)`,
    `    pk_restore`,
    `    pk_kubelet_healthy ${settleSeconds} || true`,
    `    printf '%s\\n' "$why" >&2`,
    `    pk_fail "the kubelet was unhealthy after its files changed; the files were restored from their backups and the kubelet restarted"`,
    `  fi`,
    `  pk_files_settled`,
    `  echo "changed=$PK_CHANGED"`,
    `else`,
    `  echo "changed=0"`,
    `fi`,
  ]);
  return { create, update: create };
}

/** `kubelet-files`: the kubelet files as this version's kubeadm leaves them (and finished where it stops short). */
export const kubeletFiles: StepKind = {
  action: "kubelet-files",
  summary: ({ cluster }) =>
    cluster.nodeLocalCriSocket
      ? `${gateWords(cluster)}: instance-config.yaml with the node's endpoint, config.yaml containerRuntimeEndpoint, no --container-runtime-endpoint in kubeadm-flags.env (backup, atomic replace; kubelet restarted and checked only on a change, backups restored if it fails)`
      : `${gateWords(cluster)}: --container-runtime-endpoint in kubeadm-flags.env, no instance-config.yaml (backup, atomic replace; kubelet restarted and checked only on a change, backups restored if it fails)`,
  scripts: ({ cluster, node, settings }) => kubeletFilesScripts(node.name, settings.kubeletSettleSeconds, cluster.nodeLocalCriSocket),
  stdin: {
    reads: ({ node }) => [stepId(node.name, "kubelet")],
    render: ({ cluster, node }, v) =>
      encodeFileChanges(kubeletFileChanges(cluster.nodeLocalCriSocket, v.endpoint, parseFileSnapshot(v.stdout(stepId(node.name, "kubelet"))))),
  },
};
