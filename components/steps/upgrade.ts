/**
 * Step kind `upgrade`, on each node in the rollout line: the install step, `kubeadm upgrade apply` (first
 * control-plane node) or `kubeadm upgrade node`, the kubelet restarted and checked; then the node's
 * kubelet files are printed for the `kubelet-files` step. Does nothing when the node is already at the
 * target version, so it is safe on a new node and on a re-run after a failure midway (a node is never
 * upgraded twice).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { encodeFileChanges } from "../scripts/files";
import { renderInstallCommand } from "../scripts/install";
import { KUBELET_FILES, preUpgradeFileChanges } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";

/** What the upgrade step needs. */
export interface UpgradeInput {
  node: string;
  /** Target version, `v1.34.2`. */
  version: string;
  /** `kubeadm upgrade apply` (first control-plane node) or `kubeadm upgrade node`. */
  apply: boolean;
  /** The install command for this node with the version substituted (bash), or undefined for none. */
  install?: string;
  /** Seconds the kubelet must stay active after its restart. */
  settleSeconds: number;
  /** Plain words of the gate state: part of the text so the files are read again when it changes. */
  gate: string;
  /** NodeLocalCRISocket in effect: fail first, changing nothing, when a file outside kubeadm-flags.env sets the endpoint flag. */
  nodeLocalCriSocket: boolean;
}

/**
 * On the node, when it is not at the target version (recorded in /var/lib/pulumi-kubeadm/version; a
 * node without the record was just made at the target): check the step is one kubeadm allows (one
 * minor up, or a patch), apply the pre-upgrade file changes from stdin (instance-config.yaml with the
 * node's endpoint when the gate is in effect: `preUpgradeFileChanges`), run the install command,
 * `kubeadm upgrade apply <v> --yes` / `kubeadm upgrade node` once, restart the kubelet and check it, wait for the Node to be Ready again if it was. Then, always, print
 * the kubelet files for the next step. With NodeLocalCRISocket in effect it first fails, changing
 * nothing, when a file outside kubeadm-flags.env sets --container-runtime-endpoint (naming the file).
 */
export function upgradeScripts(input: UpgradeInput): StepScripts {
  const target = shellQuote(input.version);
  const kubeadm = input.apply ? `kubeadm upgrade apply ${input.version} --yes` : "kubeadm upgrade node";
  const ready = `kubectl --kubeconfig /etc/kubernetes/kubelet.conf get node ${shellQuote(input.node)} -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'`;
  const create = renderScript(input.node, [
    `: gate ${shellQuote(input.gate)}`,
    ...(input.nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    `target=${target}`,
    `record=$PK_STATE_DIR/version`,
    `current=""`,
    `if [ -f "$record" ]; then current=$(cat "$record"); fi`,
    `if [ -z "$current" ]; then`,
    `  mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"`,
    `  echo "$target" >"$record.tmp" && mv -f "$record.tmp" "$record"`,
    `elif [ "$current" != "$target" ]; then`,
    `  IFS=. read -r cmaj cmin cpatch <<<"\${current#v}"`,
    `  IFS=. read -r tmaj tmin tpatch <<<"\${target#v}"`,
    `  if [ "$tmaj" != "$cmaj" ] || [ "$tmin" -lt "$cmin" ] || [ "$tmin" -gt $((cmin + 1)) ] || { [ "$tmin" = "$cmin" ] && [ "$tpatch" -lt "$cpatch" ]; }; then`,
    `    pk_fail "cannot go from $current to $target: kubeadm upgrades one minor version at a time and never downgrades"`,
    `  fi`,
    `  pk_apply_files`,
    ...(input.install !== undefined
      ? [`  printf 'pulumi-kubeadm: node %s: install step for %s\\n' "$PK_NODE" "$target" >&2`, `  bash -c ${shellQuote(input.install)} >&2 || pk_fail "the install step failed"`]
      : []),
    `  wasReady=$(${ready} 2>/dev/null || true)`,
    `  pk_run_once "upgrade-$target" ${kubeadm}`,
    `  pk_kubelet_healthy ${input.settleSeconds} || pk_fail "the kubelet is not healthy after the upgrade to $target: $(systemctl status kubelet 2>&1 | tail -n 3 | tr '\\n' ' ')"`,
    `  if [ "$wasReady" = True ]; then`,
    `    for _ in $(seq 1 120); do [ "$(${ready} 2>/dev/null || true)" = True ] && break; sleep 1; done`,
    `    [ "$(${ready} 2>/dev/null || true)" = True ] || pk_fail "the Node is not Ready 120 s after the upgrade"`,
    `  fi`,
    `  pk_files_settled`,
    `  echo "$target" >"$record.tmp" && mv -f "$record.tmp" "$record"`,
    `  printf 'pulumi-kubeadm: node %s: upgraded from %s to %s\\n' "$PK_NODE" "$current" "$target" >&2`,
    `fi`,
    `pk_snapshot ${Object.values(KUBELET_FILES).join(" ")}`,
  ]);
  return { create, update: create };
}

/** `upgrade`: the node to the target version, once. */
export const upgrade: StepKind = {
  action: "upgrade",
  summary: ({ cluster, node, firstControlPlane, change }) => {
    const to = cluster.version.text;
    const kubeadm = node.name === firstControlPlane ? `kubeadm upgrade apply ${to}` : "kubeadm upgrade node";
    return `${change}: if the node is not at ${to}: install step, ${kubeadm}, restart the kubelet and check it; then read the kubelet files`;
  },
  scripts: ({ cluster, node, settings }) => {
    const template = settings.installCommand(node.name);
    return upgradeScripts({
      node: node.name,
      version: cluster.version.text,
      apply: node.name === cluster.controlPlane[0]?.name,
      install: template === undefined ? undefined : renderInstallCommand(template, cluster.version),
      settleSeconds: settings.kubeletSettleSeconds,
      gate: cluster.nodeLocalCriSocket ? "node-local" : "legacy",
      nodeLocalCriSocket: cluster.nodeLocalCriSocket,
    });
  },
  // With the gate in effect, instance-config.yaml is made right before kubeadm reads it.
  stdin: { render: ({ cluster }, v) => encodeFileChanges(preUpgradeFileChanges(cluster.nodeLocalCriSocket, v.endpoint)) },
  dataOutput: true,
};
