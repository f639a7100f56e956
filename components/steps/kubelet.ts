/**
 * Step kind `kubelet`, in a node's rollout unit after `upgrade` and `drain` (kubeadm's documented
 * upgrade order): when the node is not at the target, the kubelet and kubectl packages
 * (`kubeletInstallCommand`), the kubelet restarted and checked, the Node Ready again if it was, the
 * version recorded. Then, always, the kubelet files as they are now, for the `kubelet-files` step: the
 * files are read right before they are changed, whenever what they must hold changes (version, gate,
 * the node's CRI endpoint), never from an older snapshot.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { renderInstallCommand } from "../scripts/install";
import { KUBELET_FILES } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** What the kubelet step needs. */
export interface KubeletInput {
  node: string;
  /** Target version, `v1.34.2`. */
  version: string;
  /** The kubelet and kubectl install command with the version substituted (bash), or undefined for none. */
  install?: string;
  /** Seconds the kubelet must stay active after its restart. */
  settleSeconds: number;
  /** Plain words of the gate state and the node's endpoint: part of the text, so the files are read again when they change. */
  wanted: string;
}

/**
 * When the node is not at the target (`pk_node_version`): the install command, a kubelet restart and
 * health check (`pk_kubelet_healthy`), a wait of up to 120 s for the Node to be Ready if it was before,
 * the pending pre-upgrade file changes settled, the target recorded. Fails naming the node when the
 * kubelet is unhealthy or the Node does not come back Ready. Then prints the kubelet files (`pk-file`).
 */
export function kubeletScripts(input: KubeletInput): StepScripts {
  const ready = `kubectl --kubeconfig /etc/kubernetes/kubelet.conf get node ${shellQuote(input.node)} -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'`;
  const create = renderScript(input.node, [
    `: wanted ${shellQuote(input.wanted)}`,
    `target=${shellQuote(input.version)}`,
    `current=$(pk_node_version ${shellQuote(input.node)} "$target")`,
    `if [ "$current" != "$target" ]; then`,
    ...(input.install !== undefined
      ? [
          `  printf 'pulumi-kubeadm: node %s: kubelet install step for %s\\n' "$PK_NODE" "$target" >&2`,
          `  bash -c ${shellQuote(input.install)} >&2 || pk_fail "the kubelet install step failed"`,
        ]
      : []),
    `  wasReady=$(${ready} 2>/dev/null || true)`,
    `  pk_kubelet_healthy ${input.settleSeconds} || pk_fail "the kubelet is not healthy after the upgrade to $target: $(systemctl status kubelet 2>&1 | tail -n 3 | tr '\\n' ' ')"`,
    `  if [ "$wasReady" = True ]; then`,
    `    for _ in $(seq 1 120); do [ "$(${ready} 2>/dev/null || true)" = True ] && break; sleep 1; done`,
    `    [ "$(${ready} 2>/dev/null || true)" = True ] || pk_fail "the Node is not Ready 120 s after the upgrade"`,
    `  fi`,
    `  pk_files_settled`,
    `  pk_record_version "$target"`,
    `  printf 'pulumi-kubeadm: node %s: upgraded from %s to %s\\n' "$PK_NODE" "$current" "$target" >&2`,
    `fi`,
    `pk_snapshot ${Object.values(KUBELET_FILES).join(" ")}`,
  ]);
  return { create, update: create };
}

/** `kubelet`: the kubelet and kubectl to the target, restarted and checked; then the kubelet files read. */
export const kubelet: StepKind = {
  action: "kubelet",
  summary: ({ cluster }) =>
    `if the node is not at ${cluster.version.text}: the kubelet and kubectl packages, restart the kubelet and check it, wait for Ready; then read the kubelet files`,
  scripts: ({ cluster, node, settings }, endpoint) => {
    const template = settings.kubeletInstall(node.name);
    return kubeletScripts({
      node: node.name,
      version: cluster.version.text,
      install: template === undefined ? undefined : renderInstallCommand(template, cluster.version, "kubeletInstallCommand"),
      settleSeconds: settings.kubeletSettleSeconds,
      wanted: `${cluster.nodeLocalCriSocket ? "node-local" : "legacy"} ${endpoint}`,
    });
  },
  scriptsUseEndpoint: true,
  dataOutput: true,
};
