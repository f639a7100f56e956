/**
 * Step kind `drain`, on the first control-plane node, in the rollout line after the `upgrade` step of
 * the node(s) it drains (kubeadm's documented order: kubeadm, `kubeadm upgrade`, drain, kubelet): cordon
 * and drain a node when its kubelet is about to change: a node whose kubelet is not at the target
 * version (kubeadm's upgrade guide drains control-plane nodes too: they may run CoreDNS or, with
 * `taints: []`, any workload), or whose container runtime is switched (its CRI endpoint changes). Decided
 * from what the node itself reported in its `upgrade` step, not from the stack. One step per
 * control-plane node (`drain`), one per rollout batch of workers (`batchDrain`: `maxUnavailableWorkers`
 * of them, drained side by side). The node is marked as cordoned by this component (annotation
 * `kubeadm.pulumi.com/cordoned`, components/steps/cordon.ts), so that the steps that uncordon (`node-metadata`,
 * the next batch's `drain`, the last batch's `uncordon`) uncordon only a node this component cordoned,
 * never one an operator cordoned.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { drainFlags } from "../scripts/kubectl";
import { parseFileSnapshot } from "../scripts/files";
import { KUBELET_FILES, type FileState } from "../kubeadm/nodeFiles";
import type { StepScripts } from "../scripts/types";
import type { StepContext, StepKind } from "./kind";
import { stepId } from "./ids";
import { membersWords } from "./words";
import { uncordonLines } from "./cordon";

/** What a drain step needs. */
export interface DrainInput {
  /**
   * The nodes it drains when their verdict says so: one control-plane node, or a rollout batch of
   * workers, in order. Messages about one member name it; the others name them all (`w3 and w4`).
   */
  members: string[];
  timeoutSeconds: number;
  /** kubectl drain --grace-period; undefined = each pod's own. */
  gracePeriodSeconds?: number;
  /**
   * A rollout batch of workers: the window held in the cluster too. `ahead`: the nodes whose cordon marks
   * this drain waits on (the plan sets it on the first batch only, to the control-plane nodes; a later
   * batch's drain is ordered by the graph and uncordons the batch before itself, `uncordonFirst`); `size`:
   * `maxUnavailableWorkers`, for the message. Undefined: no check.
   */
  window?: { ahead: string[]; size: number };
  /**
   * A rollout batch of workers after the first: the members of the batch before, uncordoned first (those
   * this component cordoned: `uncordonLines`), before anything else; the plan runs the step after their
   * kubelet steps. Undefined or empty: none.
   */
  uncordonFirst?: string[];
}

/**
 * The batch before uncordoned first (`uncordonFirst`), then one call of lib.sh's `pk_drain_step`, which:
 * reads one line per member on stdin, in member order, `drain <report> <reason>` or `keep <report> <reason>`
 * (`drainVerdict`; `<report>` the id of the member's upgrade step's run the verdict comes from, `-` when
 * unknown). A member is drained unless its verdict is `keep`, or it was drained for that report already
 * (its id in `$PK_STATE_DIR/drained/<node>` on the first control-plane node, written after each drain)
 * and carries no cordon mark of this component (its unit uncordoned it since): the report is rolled out
 * (the step runs again on it when only its own inputs changed: a drain setting, `--replace`, a batch's
 * new members; draining then would evict the node's pods for nothing, and no later step would uncordon
 * it). Each member to drain is marked (`kubeadm.pulumi.com/cordoned=<reason>`) unless it is already
 * unschedulable (an operator's cordon: drained, but left to the operator): the members read in ONE kubectl
 * call and marked with one per reason (lib.sh's pk_mark_for_drain; the batch before is uncordoned the same
 * way, pk_uncordon_marked), so a batch's kubectl calls besides its drains do not grow with its size; then
 * every one is drained at the same time (`kubectl drain`, which cordons first). A failed drain (a PodDisruptionBudget, the
 * timeout) fails the step naming the node and kubectl's reason, once every drain ended; the members stay
 * cordoned and the rollout stops there.
 * With `window` (workers), the window holds in the cluster whatever the graph did (a node's `prepare`
 * report that was stale, so the plan's line did not wait): under a lock on the first control-plane node
 * (every drain runs there), the step waits while a node of the batch ahead carries this component's
 * cordon mark (that batch is between its drain and its uncordon), and fails after `timeoutSeconds`, naming
 * them and changing nothing. Marks elsewhere do not hold it up: one a failed run left on a later batch's
 * member (a smaller `maxUnavailableWorkers` since) or on a node taken out of `nodes` (removed at the end
 * of the run) could never clear while it waits.
 * Stdout: one line per member, `<node>: drained: <reason>` or `<node>: no drain: <reason>`.
 */
export function drainScripts(input: DrainInput): StepScripts {
  const window = input.window;
  const first = input.uncordonFirst ?? [];
  const create = renderScript(membersWords(input.members), [
    ...(first.length > 0 ? uncordonLines(first) : []),
    [
      "pk_drain_step",
      String(input.timeoutSeconds),
      shellQuote(drainFlags(input.timeoutSeconds, input.gracePeriodSeconds)),
      window ? String(window.size) : "''",
      shellQuote(window ? window.ahead.join(" ") : ""),
      ...input.members.map(shellQuote),
    ].join(" "),
  ]);
  return { create, update: create };
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
  const report = upgradeReport(upgradeStdout);
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

/** The id of the run of an `upgrade` step that printed `upgradeStdout` (its `report=<id>` line, new on every run), `-` when there is none. */
export function upgradeReport(upgradeStdout: string): string {
  return /^report=([0-9a-f-]+)$/m.exec(upgradeStdout)?.[1] ?? "-";
}

/** The drain settings of the cluster, as the scripts take them. */
function drainSettings(settings: StepContext["settings"]): Pick<DrainInput, "timeoutSeconds" | "gracePeriodSeconds"> {
  return { timeoutSeconds: settings.drainTimeoutSeconds, gracePeriodSeconds: settings.drainGracePeriodSeconds };
}

/** `drain` of a control-plane node: cordon and drain it when its kubelet is about to change. */
export const drain: StepKind = {
  action: "drain",
  summary: ({ cluster }) =>
    `cordon and drain if its kubelet is not at ${cluster.version.text} or its container runtime is switched (a new criSocket) (a failed drain stops the rollout here, the node stays cordoned)`,
  scripts: ({ node, settings }) => drainScripts({ members: [node.name], ...drainSettings(settings) }),
  stdin: {
    reads: ({ node }) => [stepId(node.name, "upgrade")],
    render: ({ cluster, node }, v) => drainVerdict(v.stdout(stepId(node.name, "upgrade")), cluster.version.text, v.endpoint),
  },
  idleOnJoin: true,
};

/**
 * `drain` of a rollout batch of workers (step id `<batch>-drain`, `batch_<k>`: `maxUnavailableWorkers`
 * workers in plan order), in ONE session on the first control-plane node. After the first batch, it first
 * uncordons the batch before (`uncordonsFirst`: what this component cordoned there), whose kubelet steps
 * it runs after (kubeadm's upgrade guide: uncordon after the kubelet), so that batch's uncordon costs no
 * step of its own. Then each member whose kubelet is about to change, cordoned and drained at the same
 * time, as kubeadm's upgrade guide drains a worker, once every member ran its `kubeadm upgrade node`. Its
 * stdin holds, after its members' verdicts, one line per member of the batch before with its upgrade
 * step's report (`ahead <node> <report>`, not read by the script): every run that may have drained that
 * batch (a version, a runtime switch: a new report) runs this step too. Its create runs no command when
 * no member, of its own or of the batch before, had joined before this run (`idleOnJoin`: nothing is
 * rolled out). No delete; its `triggers` are its members: a change of them replaces it, and the new step
 * drains nothing already drained for the same upgrade report.
 */
export const batchDrain: StepKind = {
  action: "drain",
  summary: ({ cluster, members, uncordonsFirst = [] }) => {
    const first = uncordonsFirst.length > 0 ? `first uncordon ${membersWords(uncordonsFirst)} (the batch before, after its kubelets; only what this component cordoned), then ` : "";
    const checked = uncordonsFirst.length > 0 ? "" : "; after the control plane is uncordoned, checked in the cluster too";
    return `${first}for ${membersWords(members ?? [])}, in one session, side by side: cordon and drain each whose kubelet is not at ${cluster.version.text} or whose container runtime is switched (a new criSocket)${checked} (a failed drain stops the rollout here, the batch stays cordoned)`;
  },
  scripts: ({ step, settings }) =>
    drainScripts({
      members: step.members ?? [],
      ...((step.uncordonsFirst ?? []).length > 0 ? { uncordonFirst: step.uncordonsFirst } : { window: { ahead: step.ahead ?? [], size: settings.maxUnavailableWorkers } }),
      ...drainSettings(settings),
    }),
  stdin: {
    reads: ({ step }) => [...(step.members ?? []), ...(step.uncordonsFirst ?? [])].map((m) => stepId(m, "upgrade")),
    endpointsOf: ({ step }) => step.members ?? [],
    render: ({ cluster, step }, v) =>
      (step.members ?? []).map((m) => drainVerdict(v.stdout(stepId(m, "upgrade")), cluster.version.text, v.endpointOf(m))).join("") +
      (step.uncordonsFirst ?? []).map((m) => `ahead ${m} ${upgradeReport(v.stdout(stepId(m, "upgrade")))}\n`).join(""),
  },
  idleOnJoin: true,
  triggers: (ctx) => ctx.step.members ?? [],
};
