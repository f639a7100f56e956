/**
 * The `plan` output: what this run changes, in rollout order, node by node, decided as the component
 * decides it, from its own record of the last `up` (records.ts) and the transitions it finds there
 * (transitions.ts). A node that joins, the version step on each node, a runtime switch, a gate toggle,
 * a machine gone, and last a node removed (drained, reset, its Node deleted, as the engine deletes after
 * everything else; its steps dropped with nothing run when the record marks it gone); "nothing to
 * change" when the record says the cluster is as asked.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";
import type { Step } from "../plan/steps";
import { modeWords } from "../steps/words";
import type { MembersRecord } from "./records";
import type { Transitions } from "./transitions";

/** The windows of the rollout, for the words (defaults as `buildPlan`'s). */
export interface ChangeWindows {
  maxConcurrentJoins?: number;
  maxUnavailableWorkers?: number;
}

/** What joining means for a node: `kubeadm init` on the first control-plane node, else a join. */
function joinWords(cluster: ValidCluster, node: ValidNode, first: string, w: ChangeWindows): string {
  const version = cluster.version.text;
  if (node.name === first) return `kubeadm init ${version} (${modeWords(cluster)}), then its kubelet files and labels`;
  if (node.role === "control-plane") return `kubeadm join --control-plane ${version}, one control-plane node at a time, then its kubelet files and labels`;
  return `kubeadm join ${version} (at most ${workers(w.maxConcurrentJoins ?? 10)} at once), then its kubelet files and labels`;
}

/** "1 worker", "3 workers". */
function workers(n: number): string {
  return `${n} worker${n === 1 ? "" : "s"}`;
}

/**
 * A version step on a node of the cluster, in kubeadm's order: the kubeadm package and `kubeadm upgrade`,
 * then every node (control-plane nodes too, as kubeadm's upgrade guide does) drained around its kubelet.
 */
function upgradeWords(node: ValidNode, first: string, from: string, to: string, w: ChangeWindows): string {
  const kubeadm = `(from ${from}; the kubeadm package first), drained, the kubelet and kubectl packages, kubelet restarted and checked, uncordoned`;
  if (node.name === first) return `kubeadm upgrade apply ${to} ${kubeadm}`;
  if (node.role === "control-plane") return `kubeadm upgrade node to ${to} ${kubeadm} (one control-plane node at a time)`;
  return `kubeadm upgrade node to ${to} ${kubeadm} (at most ${workers(w.maxUnavailableWorkers ?? 1)} at once)`;
}

/**
 * The plan output's lines.
 * @param clusterName the component's name.
 * @param steps the plan (its order is the rollout order).
 * @param last the members record of the last `up` (undefined: a new cluster).
 * @param t what transitions.ts found (removals, runtime switches, machines gone).
 * @returns one line per node that changes, `node "w1" (worker): ...`, in rollout order, removals last;
 *   or one line `nothing to change: ...`. Labels, taints and kubelet flags are not in the record: a
 *   change of them alone is applied by its step but not named here.
 */
export function describeChanges(clusterName: string, cluster: ValidCluster, steps: Step[], last: MembersRecord | undefined, t: Transitions, w: ChangeWindows = {}): string[] {
  const first = cluster.controlPlane[0]?.name ?? "";
  const before = new Map((last?.nodes ?? []).map((n) => [n.name, n]));
  const nodes = new Map(cluster.nodes.map((n) => [n.name, n]));
  const gateToggled = last?.nodeLocalCriSocket !== undefined && last.nodeLocalCriSocket !== cluster.nodeLocalCriSocket;
  const lines: string[] = [];
  // Rollout order: each node's upgrade step stands where its unit stands in the plan.
  for (const step of steps.filter((s) => s.action === "upgrade")) {
    const node = nodes.get(step.node) as ValidNode;
    const said: string[] = [];
    const moved = t.byNode.get(node.name);
    if (node.gone) said.push(moved ?? "the machine is gone: its Node object is deleted");
    else if (last === undefined || !before.has(node.name)) said.push(joinWords(cluster, node, first, w));
    else {
      if (last.version !== cluster.version.text) said.push(upgradeWords(node, first, last.version, cluster.version.text, w));
      if (moved !== undefined) said.push(moved);
      if (gateToggled) said.push(`kubelet files rewritten: ${modeWords(cluster)}`);
    }
    if (said.length > 0) lines.push(node.gone || moved !== undefined && said.length === 1 ? said[0] as string : `node "${node.name}" (${node.role}): ${said.join("; ")}`);
  }
  for (const old of last?.nodes ?? []) {
    const line = nodes.has(old.name) ? undefined : t.byNode.get(old.name);
    if (line !== undefined) lines.push(line);
  }
  if (lines.length > 0) return lines;
  return [`nothing to change: cluster "${clusterName}" is as the last up recorded it (${cluster.version.text}, ${cluster.nodes.length} node${cluster.nodes.length === 1 ? "" : "s"}); every step still checks its node and changes nothing already as asked`];
}
