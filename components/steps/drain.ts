/**
 * Step kind `drain`, on the first control-plane node for each node, in the rollout line after the
 * node's `upgrade` step (kubeadm's documented order: kubeadm, `kubeadm upgrade`, drain, kubelet): cordon
 * and drain the node when its kubelet is about to change: a node whose kubelet is not at the target
 * version (kubeadm's upgrade guide drains control-plane nodes too: they may run CoreDNS or, with
 * `taints: []`, any workload), or whose container runtime is switched (its CRI endpoint changes). Decided from what
 * the node itself reported in its `upgrade` step, not from the stack. The node is marked as cordoned by
 * this component (annotation `kubeadm.pulumi.com/cordoned`), so that `node-metadata` uncordons only a
 * node this component cordoned, never one an operator cordoned.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { KUBECTL, drainCommand } from "../scripts/kubectl";
import { parseFileSnapshot } from "../scripts/files";
import { KUBELET_FILES, type FileState } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";
import { stepId } from "./ids";

/** The annotation that says this component cordoned the Node (its value: why). */
export const CORDONED_ANNOTATION = "kubeadm.pulumi.com/cordoned";

/** What the drain step needs. */
export interface DrainInput {
  node: string;
  timeoutSeconds: number;
  /** kubectl drain --grace-period; undefined = each pod's own. */
  gracePeriodSeconds?: number;
  /**
   * A worker: `maxUnavailableWorkers`, the window enforced in the cluster too (the plan's line enforces
   * it in the graph): at most this many Nodes cordoned by this component at once. Undefined: no check.
   */
  maxUnavailable?: number;
}

/**
 * Reads one line on stdin, `drain <report> <reason>` or `keep <report> <reason>` (`drainVerdict`; `<report>`
 * the id of the upgrade step's run the verdict comes from, `-` when unknown). On `drain` for a report
 * this step drained the node for already (its id in `$PK_STATE_DIR/drained/<node>` on the first
 * control-plane node, written after each drain), on a node that carries no cordon mark of this component
 * (its unit uncordoned it since): nothing, the report is rolled out (the step runs again on it when only
 * its own inputs changed: a drain setting, `--replace`; draining then would evict the node's pods for
 * nothing, and no later step would uncordon it). Else on `drain`: mark the
 * Node (`kubeadm.pulumi.com/cordoned=<reason>`) unless it is already unschedulable (an operator's
 * cordon: drained, but left to the operator), then `kubectl drain` (which cordons first). A failed
 * drain (a PodDisruptionBudget, the timeout) fails the step naming the node and kubectl's reason; the
 * node stays cordoned and the rollout stops there.
 * With `maxUnavailable` (a worker), the window holds in the cluster whatever the graph did: under a lock
 * on the first control-plane node (every drain runs there), the step waits while that many other Nodes
 * carry this component's cordon mark, and fails after `timeoutSeconds`, naming them and changing nothing.
 */
export function drainScripts(input: DrainInput): StepScripts {
  const node = shellQuote(input.node);
  const annotation = `{.metadata.annotations.${CORDONED_ANNOTATION.replace(/\./g, "\\.")}}`;
  const create = renderScript(input.node, [
    `IFS=' ' read -r verdict report reason || true`,
    `if [ "$verdict" != drain ]; then echo "no drain: $reason"; exit 0; fi`,
    `record="$PK_STATE_DIR/drained/"${node}`,
    `if [ "$report" != - ] && [ -f "$record" ] && [ "$(cat "$record")" = "$report" ]; then`,
    `  mark=$(${KUBECTL} get node ${node} -o jsonpath=${shellQuote(annotation)}) || pk_fail "cannot read the Node"`,
    `  if [ -z "$mark" ]; then echo "no drain: drained for this upgrade report already, and uncordoned since ($reason)"; exit 0; fi`,
    `fi`,
    ...(input.maxUnavailable !== undefined ? windowLines(input.node, input.maxUnavailable, input.timeoutSeconds, annotation) : []),
    `seen=$(${KUBECTL} get node ${node} -o jsonpath=${shellQuote(`{.spec.unschedulable}|${annotation}`)}) || pk_fail "cannot read the Node"`,
    `IFS='|' read -r unschedulable ours <<<"$seen" || true`,
    `if [ "$unschedulable" != true ] || [ -n "$ours" ]; then`,
    `  ${KUBECTL} annotate --overwrite node ${node} ${shellQuote(`${CORDONED_ANNOTATION}=`)}"$reason" >&2`,
    `else`,
    `  printf 'pulumi-kubeadm: node %s: cordoned by someone else; drained, and left cordoned\\n' "$PK_NODE" >&2`,
    `fi`,
    ...(input.maxUnavailable !== undefined ? [`flock -u 9`] : []),
    `err=$(mktemp); trap 'rm -f "$err"' EXIT`,
    `if ! ${drainCommand(input.node, input.timeoutSeconds, input.gracePeriodSeconds)} >&2 2>"$err"; then`,
    `  cat "$err" >&2`,
    `  pk_fail "drain failed, the node stays cordoned and the rollout stops here: $(tail -n 1 "$err")"`,
    `fi`,
    `if [ "$report" != - ]; then`,
    `  mkdir -p "\${record%/*}" && chmod 0700 "$PK_STATE_DIR" "\${record%/*}"`,
    `  printf '%s\\n' "$report" >"$record.tmp" && mv -f "$record.tmp" "$record"`,
    `fi`,
    `echo "drained: $reason"`,
  ]);
  return { create, update: create };
}

/**
 * The worker window in the cluster: take the drain lock (fd 9, released once this node carries its mark),
 * then wait while `size` other Nodes carry this component's cordon mark (a unit between its drain and its
 * uncordon), at most `timeoutSeconds`.
 */
function windowLines(node: string, size: number, timeoutSeconds: number, annotation: string): string[] {
  const marks = shellQuote(`{range .items[*]}{.metadata.name}|${annotation}{"\\n"}{end}`);
  return [
    `mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"`,
    `exec 9>"$PK_STATE_DIR/drain.lock"`,
    `flock 9`,
    `waited=0`,
    `while :; do`,
    `  marks=$(${KUBECTL} get nodes -o jsonpath=${marks}) || pk_fail "cannot list the Nodes"`,
    `  busy=$(awk -F'|' -v me=${shellQuote(node)} '$1 != me && $2 != "" { printf "%s ", $1 }' <<<"$marks")`,
    `  [ "$(wc -w <<<"$busy")" -ge ${size} ] || break`,
    `  [ "$waited" -lt ${timeoutSeconds} ] || pk_fail "maxUnavailableWorkers (${size}) reached: \${busy% } still cordoned by this component; nothing was changed on this node"`,
    `  flock -u 9; sleep 2; waited=$((waited + 2)); flock 9`,
    `done`,
  ];
}

/** `/var/run/x` and `/run/x` name the same socket on current distributions. */
function sameSocket(a: string, b: string): boolean {
  const norm = (e: string) => e.replace(/^unix:\/\/\/var\/run\//, "unix:///run/");
  return norm(a) === norm(b);
}

/**
 * The CRI endpoint the node's kubelet uses now, from its files: the `--container-runtime-endpoint` flag
 * in kubeadm-flags.env (a flag beats the config file), else config.yaml's `containerRuntimeEndpoint`;
 * undefined when neither says.
 */
export function endpointInUse(files: ReadonlyMap<string, FileState>): string | undefined {
  const flags = files.get(KUBELET_FILES.flagsEnv)?.content ?? "";
  const flag = /--container-runtime-endpoint=([^\s"]+)/.exec(flags)?.[1];
  if (flag) return flag;
  const config = files.get(KUBELET_FILES.config)?.content ?? "";
  const fromConfig = /^containerRuntimeEndpoint:\s*"?([^"\s]*)"?\s*$/m.exec(config)?.[1];
  return fromConfig ? fromConfig : undefined;
}

/**
 * The drain step's stdin, from what the node's `upgrade` step printed: `drain <report> <reason>` when the
 * kubelet is about to change (the node not at `target`, whatever its role; its endpoint in use differs
 * from `endpoint`), else `keep <report> <reason>`; `keep` too when the upgrade step printed nothing (it
 * ran no command: its node joined at the target, `idleOnJoin`). `<report>` is the id the upgrade step
 * printed (`report=<id>`, new on every run), `-` when there is none (a report of an earlier version of
 * this package, or none at all): the drain step drains once per report. Never throws: output it cannot
 * read means drain (the safe side).
 * The files are read at the end of the upgrade step, after any `kubeadm upgrade`: the endpoint in use
 * decides alone only on a node already at the target, where no kubeadm ran (a node not at the target is
 * drained for its version whatever kubeadm wrote).
 */
export function drainVerdict(upgradeStdout: string, target: string, endpoint: string): string {
  // The upgrade step ran no command (its node joined at the target in the run that made it): nothing
  // rolled out there, so nothing to drain for.
  if (upgradeStdout.trim() === "") return `keep - the node joined at the target, nothing rolled out\n`;
  const report = /^report=([0-9a-f-]+)$/m.exec(upgradeStdout)?.[1] ?? "-";
  try {
    const version = /^nodeVersion=(\S+)$/m.exec(upgradeStdout)?.[1];
    const inUse = endpointInUse(parseFileSnapshot(upgradeStdout));
    if (inUse !== undefined && !sameSocket(inUse, endpoint)) return `drain ${report} container runtime ${inUse} -> ${endpoint}\n`;
    if (version !== target) return `drain ${report} kubelet ${version ?? "unknown"} -> ${target}\n`;
    return `keep ${report} kubelet at ${target}, runtime unchanged\n`;
  } catch (e) {
    return `drain - the node's state could not be read (${(e as Error).message.split("\n")[0]})\n`;
  }
}

/** `drain`: cordon and drain a node whose kubelet is about to change. */
export const drain: StepKind = {
  action: "drain",
  summary: ({ cluster }) =>
    `cordon and drain if its kubelet is not at ${cluster.version.text} or its container runtime is switched (a new criSocket) (a failed drain stops the rollout here, the node stays cordoned)`,
  scripts: ({ node, settings }) =>
    drainScripts({
      node: node.name,
      timeoutSeconds: settings.drainTimeoutSeconds,
      gracePeriodSeconds: settings.drainGracePeriodSeconds,
      ...(node.role === "worker" ? { maxUnavailable: settings.maxUnavailableWorkers } : {}),
    }),
  stdin: {
    reads: ({ node }) => [stepId(node.name, "upgrade")],
    render: ({ cluster, node }, v) => drainVerdict(v.stdout(stepId(node.name, "upgrade")), cluster.version.text, v.endpoint),
  },
  idleOnJoin: true,
};
