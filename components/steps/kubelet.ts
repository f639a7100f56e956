/**
 * Step kind `kubelet`, in a node's rollout unit after `upgrade` and `drain` (kubeadm's documented
 * upgrade order): when the node is not at the target, the kubelet and kubectl packages
 * (`kubeletInstallCommand`); the restart, the health check and the version record follow in
 * `kubelet-files`. Then, always, the kubelet files as they are now, for the `kubelet-files` step: the
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
  /** Plain words of the gate state and the node's endpoint: part of the text, so the files are read again when they change. */
  wanted: string;
}

/**
 * When the node is not at the target (`pk_node_version`): the install command, and the target noted in
 * $PK_STATE_DIR/kubelet-upgrade for the `kubelet-files` step, which restarts and checks the kubelet
 * once its files are right and then records the version (a kubelet restarted here would start on files
 * kubeadm left for another gate state). Then, always, prints the kubelet files (`pk-file`).
 */
export function kubeletScripts(input: KubeletInput): StepScripts {
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
    `  mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"`,
    `  echo "$target" >"$PK_STATE_DIR/kubelet-upgrade.tmp" && mv -f "$PK_STATE_DIR/kubelet-upgrade.tmp" "$PK_STATE_DIR/kubelet-upgrade"`,
    `fi`,
    `pk_snapshot ${Object.values(KUBELET_FILES).join(" ")}`,
  ]);
  return { create, update: create };
}

/** `kubelet`: the kubelet and kubectl to the target, restarted and checked; then the kubelet files read. */
export const kubelet: StepKind = {
  action: "kubelet",
  shows: ["kubernetesVersion", "criSocket", "NodeLocalCRISocket"],
  summary: ({ cluster }) =>
    `if the node is not at ${cluster.version.text}: the kubelet and kubectl packages (restarted with its files in the next step); then read the kubelet files`,
  scripts: ({ cluster, node, settings }, endpoint) => {
    const template = settings.kubeletInstall(node.name);
    return kubeletScripts({
      node: node.name,
      version: cluster.version.text,
      install: template === undefined ? undefined : renderInstallCommand(template, cluster.version, "kubeletInstallCommand"),
      wanted: `${cluster.nodeLocalCriSocket ? "node-local" : "legacy"} ${endpoint}`,
    });
  },
  scriptsUseEndpoint: true,
  dataOutput: true,
  idleOnJoin: true,
};
