/**
 * What the `init` and `join` kinds share: run kubeadm once on a node, from a configuration that
 * arrives on stdin; their delete, and the cleanup before a retry, run `kubeadm reset` with the node's
 * CRI endpoint.
 */
import { renderScript } from "./script";
import { shellQuote } from "./quote";
import type { StepScripts } from "./types";

/** Where the kubeadm configuration files go on a node (dir 0700, files 0600). */
export const CONFIG_DIR = "/etc/kubernetes/pulumi-kubeadm";

/**
 * `kubeadm reset -f --cri-socket <endpoint>`. Without `--cri-socket`, kubeadm reset takes the socket
 * from the cluster only where an admin kubeconfig reaches it, and otherwise detects it, failing with
 * "found multiple CRI endpoints" on a node with two runtimes (containerd and cri-dockerd after a
 * Docker install): the node's own endpoint is always passed.
 */
function resetCommand(criSocket: string): string {
  return `kubeadm reset -f --cri-socket ${shellQuote(criSocket)} >&2`;
}

function resetScript(node: string, action: "init" | "join", criSocket: string): string {
  return renderScript(node, [
    `if [ -e /etc/kubernetes/kubelet.conf ] || [ -e /etc/kubernetes/admin.conf ] || [ -d "$PK_STATE_DIR/run/${action}" ]; then`,
    `  ${resetCommand(criSocket)}`,
    `fi`,
    `rm -rf "$PK_STATE_DIR/run/${action}" ${CONFIG_DIR}`,
  ]);
}

function runScript(node: string, action: "init" | "join", kubeadm: string, keepConfig: boolean, criSocket: string): string {
  const file = `${CONFIG_DIR}/kubeadm-${action}.yaml`;
  const run = `"$PK_STATE_DIR/run/${action}"`;
  return renderScript(node, [
    `if [ ! -f ${run}/done ]; then`,
    // A run that failed leaves kubeadm's half-made files, which make the next run fail preflight:
    // reset first, but only when the node had no kubeadm state before this step first ran (never
    // another cluster's node).
    `  if [ -f ${run}/rc ] && [ "$(cat ${run}/rc)" != 0 ] && [ -f ${run}/clean-before ]; then`,
    `    printf 'pulumi-kubeadm: node %s: the last kubeadm ${action} failed; kubeadm reset before trying again\\n' "$PK_NODE" >&2`,
    `    ${resetCommand(criSocket)} || pk_fail "kubeadm reset after the failed ${action} failed"`,
    `    rm -f ${run}/rc ${run}/pid`,
    `  elif [ ! -f ${run}/pid ] && pk_kubeadm_clean; then`,
    `    mkdir -p ${run} && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/run" ${run} && touch ${run}/clean-before`,
    `  fi`,
    `  mkdir -p ${CONFIG_DIR} && chmod 0700 ${CONFIG_DIR}`,
    `  tmp=$(mktemp ${CONFIG_DIR}/.kubeadm-${action}.XXXXXX)`,
    `  cat >"$tmp"`,
    `  chmod 0600 "$tmp" && sync "$tmp" && mv -f "$tmp" ${file}`,
    `fi`,
    `pk_run_once ${action} ${kubeadm} --config ${file}`,
    ...(keepConfig ? [] : [`rm -f ${file}`]),
  ]);
}

/**
 * The scripts of a kubeadm run that happens once on a node (init, join): create and update run
 * {@link runScript}'s flow; delete is `kubeadm reset -f --cri-socket <criSocket>` where kubeadm ran.
 * @param keepConfig keep the configuration file after success (init's holds no secret; join's does).
 */
export function kubeadmOnceScripts(node: string, action: "init" | "join", keepConfig: boolean, criSocket: string): StepScripts {
  const create = runScript(node, action, `kubeadm ${action}`, keepConfig, criSocket);
  return { create, update: create, delete: resetScript(node, action, criSocket) };
}
