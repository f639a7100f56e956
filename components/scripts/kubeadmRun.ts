/**
 * `init` and `join`: run kubeadm once on a node, from a configuration that arrives on stdin.
 */
import { renderScript } from "./script";
import type { StepScripts } from "./types";

/** Where the kubeadm configuration files go on a node (dir 0700, files 0600). */
export const CONFIG_DIR = "/etc/kubernetes/pulumi-kubeadm";

function resetScript(node: string, action: "init" | "join"): string {
  return renderScript(node, [
    `if [ -e /etc/kubernetes/kubelet.conf ] || [ -e /etc/kubernetes/admin.conf ] || [ -d "$PK_STATE_DIR/run/${action}" ]; then`,
    `  kubeadm reset -f >&2`,
    `fi`,
    `rm -rf "$PK_STATE_DIR/run/${action}" ${CONFIG_DIR}`,
  ]);
}

function runScript(node: string, action: "init" | "join", kubeadm: string, keepConfig: boolean): string {
  const file = `${CONFIG_DIR}/kubeadm-${action}.yaml`;
  return renderScript(node, [
    `if [ ! -f "$PK_STATE_DIR/run/${action}/done" ]; then`,
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
 * `kubeadm init --config` on the first control-plane node, once: the configuration (not secret) on
 * stdin is written to /etc/kubernetes/pulumi-kubeadm/kubeadm-init.yaml (0600) and kept. A re-run after
 * success does nothing. Delete: `kubeadm reset -f`.
 */
export function initScripts(node: string): StepScripts {
  const create = runScript(node, "init", "kubeadm init", true);
  return { create, update: create, delete: resetScript(node, "init") };
}

/**
 * `kubeadm join --config` (with `--control-plane` material inside the config for control-plane
 * nodes), once. The JoinConfiguration arrives on stdin because it carries the bootstrap token and the
 * certificate key; the file (0600) is removed once the join has succeeded. Delete: `kubeadm reset -f`
 * (like real kubeadm, this does not delete the Node object; the node-metadata step does).
 */
export function joinScripts(node: string): StepScripts {
  const create = runScript(node, "join", "kubeadm join", false);
  return { create, update: create, delete: resetScript(node, "join") };
}
