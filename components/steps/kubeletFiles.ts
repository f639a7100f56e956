/**
 * Step kind `kubelet-files`: apply the file changes the plan computed from what the node reported (stdin), with
 * backup, compare-and-swap and atomic replace; restart the kubelet only when a file changed (in this run,
 * or in an earlier run that died before it checked the kubelet) or the `kubelet` step installed a new
 * kubelet (then wait for the Node to be Ready again if it was, and record the node's new version), and
 * if it is then unhealthy, restore the backups, restart it again and fail naming the node. The kubelet
 * is thus restarted once, with files that match the version and the gate (an upgrade and a gate toggle
 * in the same `up` never start a kubelet on half-made files).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { encodeFileChanges, parseFileSnapshot } from "../scripts/files";
import type { StepScripts } from "../scripts/types";
import { kubeletFileChanges } from "../kubeadm/nodeFiles";
import type { StepKind } from "./kind";
import { stepId } from "./ids";
import { gateWords } from "./words";

/**
 * @param settleSeconds how long the kubelet must stay active after a restart to count as healthy.
 * @param version the target version, `v1.34.2` (part of the text, so the step runs in every rollout).
 * @param nodeLocalCriSocket NodeLocalCRISocket in effect: first fail, changing nothing, when a
 *   --container-runtime-endpoint is set outside kubeadm-flags.env (a kubelet systemd drop-in,
 *   /etc/default/kubelet, /etc/sysconfig/kubelet), naming the file: the kubelet would ignore the
 *   node-local socket this step reports.
 * @throws Error when settleSeconds is not a whole number >= 0.
 */
export function kubeletFilesScripts(node: string, settleSeconds: number, nodeLocalCriSocket: boolean, version?: string): StepScripts {
  if (!Number.isInteger(settleSeconds) || settleSeconds < 0) {
    throw new Error(`kubeletSettleSeconds: must be a whole number >= 0, got ${settleSeconds}`);
  }
  const ready = `kubectl --kubeconfig /etc/kubernetes/kubelet.conf get node ${shellQuote(node)} -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'`;
  const create = renderScript(node, [
    // The version is part of the text: the step runs after every `kubelet` step of a rollout, which may
    // have installed a kubelet to restart even when no file changes.
    ...(version !== undefined ? [`: rollout ${shellQuote(version)}`] : []),
    ...(nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    `pk_apply_files`,
    // The kubelet step installed a new kubelet package (recorded there, not restarted): restart it here,
    // once its files are what this version and gate need.
    `upgraded=""`,
    `if [ -f "$PK_STATE_DIR/kubelet-upgrade" ]; then upgraded=$(cat "$PK_STATE_DIR/kubelet-upgrade"); fi`,
    `if pk_files_pending || [ -n "$upgraded" ]; then`,
    `  wasReady=$(${ready} 2>/dev/null || true)`,
    `  if ! pk_kubelet_healthy ${settleSeconds}; then`,
    `    why=$(systemctl status kubelet 2>&1 | tail -n 5 || true)`,
    `    if pk_files_pending; then`,
    `      pk_restore`,
    `      pk_kubelet_healthy ${settleSeconds} || true`,
    `      printf '%s\n' "$why" >&2`,
    `      pk_fail "the kubelet was unhealthy after its files changed\${upgraded:+ and its upgrade to $upgraded}; the files were restored from their backups and the kubelet restarted"`,
    `    fi`,
    `    printf '%s\n' "$why" >&2`,
    `    pk_fail "the kubelet is not healthy after the upgrade to $upgraded"`,
    `  fi`,
    `  if [ -n "$upgraded" ] && [ "$wasReady" = True ]; then`,
    `    for _ in $(seq 1 120); do [ "$(${ready} 2>/dev/null || true)" = True ] && break; sleep 1; done`,
    `    [ "$(${ready} 2>/dev/null || true)" = True ] || pk_fail "the Node is not Ready 120 s after the kubelet restart"`,
    `  fi`,
    `  pk_files_settled`,
    `  if [ -n "$upgraded" ]; then`,
    `    pk_record_version "$upgraded"`,
    `    rm -f "$PK_STATE_DIR/kubelet-upgrade"`,
    `    printf 'pulumi-kubeadm: node %s: kubelet upgraded to %s, restarted and healthy\n' "$PK_NODE" "$upgraded" >&2`,
    `  fi`,
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
  shows: ["kubernetesVersion", "NodeLocalCRISocket"],
  summary: ({ cluster }) =>
    cluster.nodeLocalCriSocket
      ? `${gateWords(cluster)}: instance-config.yaml with the node's endpoint, config.yaml containerRuntimeEndpoint, no --container-runtime-endpoint in kubeadm-flags.env (backup, atomic replace; kubelet restarted and checked only on a change or a new kubelet, backups restored if it fails; the version recorded)`
      : `${gateWords(cluster)}: --container-runtime-endpoint in kubeadm-flags.env, no instance-config.yaml (backup, atomic replace; kubelet restarted and checked only on a change or a new kubelet, backups restored if it fails; the version recorded)`,
  scripts: ({ cluster, node, settings }) => kubeletFilesScripts(node.name, settings.kubeletSettleSeconds, cluster.nodeLocalCriSocket, cluster.version.text),
  stdin: {
    reads: ({ node }) => [stepId(node.name, "kubelet")],
    // No snapshot: the kubelet step ran no command (its node joined at the target, `idleOnJoin`), so the
    // files were not read and nothing is changed (a change against an unread file would fail its compare-and-swap).
    render: ({ cluster, node }, v) => {
      const read = parseFileSnapshot(v.stdout(stepId(node.name, "kubelet")));
      return read.size === 0 ? "" : encodeFileChanges(kubeletFileChanges(cluster.nodeLocalCriSocket, v.endpoint, read));
    },
  },
  idleOnJoin: true,
};
