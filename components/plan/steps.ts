/**
 * Layer 4, the plan: a validated cluster turns into ONE ordered list of steps, each of a step kind
 * (components/steps). The same list builds the Pulumi resources (one `command.remote.Command` per step,
 * named `<cluster>-<step id>`) and the human-readable `plan` output, so what the preview says is what
 * `up` does. This file decides only which steps exist and their order; what a step does is its kind's.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";
import type { LineNode, LineWait, Step, StepGroup, StepKind } from "../steps/kind";
import { stepId } from "../steps/ids";
import { prepare } from "../steps/prepare";
import { init } from "../steps/init";
import { joinToken, workerJoinToken } from "../steps/joinToken";
import { joinMaterial } from "../steps/joinMaterial";
import { waveMetadata } from "../steps/waveMetadata";
import { join } from "../steps/join";
import { clusterConfig, clusterConfigRead } from "../steps/clusterConfig";
import { batchDrain, drain } from "../steps/drain";
import { batchUncordon } from "../steps/uncordon";
import { upgrade } from "../steps/upgrade";
import { kubelet } from "../steps/kubelet";
import { firstNodeMetadata, nodeMetadata, workerNodeMetadata } from "../steps/nodeMetadata";
import { forget } from "../steps/forget";

export type { LineNode, LineWait, Step, StepAction, StepGroup } from "../steps/kind";
export { stepId } from "../steps/ids";

/** Options of the plan. */
export interface PlanOptions {
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
  /** Workers cordoned/upgraded/migrated at the same time, at most. Default 1. */
  maxUnavailableWorkers?: number;
  /**
   * The version the cluster ran at the last `pulumi up`, when the component knows it (its own record in
   * the state, read at preview); only for the plan's words (`v1.33.2 to v1.34.2`). The order never
   * depends on it.
   */
  fromVersion?: string;
}

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}: must be a whole number >= ${min}, got ${value}`);
  return value;
}

/**
 * The plan of the cluster, in an order that respects every `after`. One plan serves a new cluster, a
 * growing one, an upgrade and a gate toggle: every step is idempotent and decides on its node (or in
 * the cluster) whether there is anything to do, and a changed version or gate changes the inputs of
 * exactly the steps that must run again (never their `triggers`: nothing is replaced). The order is
 * the same whatever the caller passes or the stack recorded, in kubeadm's documented order:
 *
 * 1. `prepare` on every node, with no dependency (they overlap; they change nothing, report the node's
 *    socket and check kubeadm's version and skew rules there), all before anything changes;
 * 2. the first control-plane node: `init` (once), `cluster-config-read` and `cluster-config` (featureGates
 *    in the kubeadm-config ConfigMap), then its rollout unit: `upgrade` (the kubeadm package and
 *    `kubeadm upgrade apply`, before anything else in the cluster upgrades; then the kubelet files read),
 *    `drain` (a new kubelet version or a runtime switch), `kubelet` (the kubelet and kubectl packages, the
 *    kubelet files, restart, check), `node-metadata` (uncordon what this component cordoned; on this node it then reads the admin
 *    kubeconfig, after the upgrade, which renews the admin certificate);
 * 3. each other control-plane node, one at a time: `join-token` (made on the first control-plane node)
 *    after the node before it ran its `kubeadm upgrade` (its drain, kubelet and uncordon go on beside),
 *    `join` (once), then its unit (`kubeadm upgrade node`), whose `drain` waits for the node
 *    before it to be at the target (its unit done): one control-plane node cordoned at a time; a
 *    control-plane node added in the same `up` as a version change joins a control plane already at
 *    the target;
 * 4. workers once the last control-plane node ran its `kubeadm upgrade` (every API server at the
 *    target; its drain, kubelet and uncordon go on beside the first batch's `kubeadm upgrade node`, and
 *    the first batch drains once its unit is done), in join waves (the workers not gone, in plan order,
 *    `maxConcurrentJoins` at a time, ids `workers_<n>`): each wave's `join-material` (ONE bootstrap token
 *    for its members, on the first control-plane node) after its members' own `join-token` (after the
 *    first control-plane join's `join-token` when there is a second control-plane node, so that these steps
 *    run beside that join rather than ahead of it; it runs no command on a worker that joins in this run
 *    and then waits for nothing more; on a worker that had joined it waits for the control plane as the
 *    wave's material does) and after the join its first member waits for (so
 *    the token's lifetime starts when the wave can start joining, and a failed join stops the run with
 *    at most the next wave's token made), each member's `join` with that material, after the
 *    join of the worker `maxConcurrentJoins` places before it (a sliding window: at most that many joins
 *    at once, and a join starts as soon as that one ends, not when the whole wave before has joined);
 *    and in rollout batches (the same workers, `maxUnavailableWorkers` at a time, ids `batch_<n>`), one
 *    batch cordoned at a time, as kubeadm's upgrade guide takes workers: each member's `upgrade` (kubeadm's
 *    files only; kubeadm's guide runs `kubeadm upgrade node` before the drain: it runs beside the drain of
 *    the batch ahead, once that drain could start, so at most two batches wait for their kubelet after it),
 *    the batch's `drain` (one session on the
 *    first control-plane node: after the first batch, it first uncordons the batch before, whose kubelet
 *    steps it waits for (each member that had joined before this run; one joining now, for its join); then
 *    the members whose kubelet version or runtime changes, drained side by side), each member's `kubelet`; the last batch's `uncordon` (one session) after its kubelets; each
 *    member's `node-metadata` after the step that uncordoned it (no command on a worker that joins in
 *    this run, nor for a version rollout). A member that joins in this run is never cordoned: its
 *    `kubelet` and `node-metadata` wait for its own steps only, not for the batch's drain or uncordon; after a wave's last member's `node-metadata`, the wave's
 *    `node-metadata` (every member's Node edits in one session). A change of a wave's or a batch's members
 *    replaces its steps (none has a delete).
 *
 * "At the target" and the worker window are decided at run time from each node's own `prepare` report
 * (`joined=yes|no`, the step's `line`, resolved by {@link lineAfter}), never from the stack: a node that
 * had joined before this run is at the target once its unit is done and takes its place in the line;
 * a node that had not joins at the target in this run, so its unit rolls nothing out (its `upgrade`,
 * `drain` and `kubelet` run no command, `idleOnJoin`; a batch's drain runs none when no member, of its
 * own or of the batch before, had joined, the last batch's uncordon none when no member had), it is at the target once it joined, and it waits in no line and holds up no node ahead (in
 * the worker window its batch holds its place until it joined). A new cluster thus joins its workers side
 * by side and runs no unit one after another; an upgrade keeps kubeadm's order and the window, across
 * nodes that join in this run too (`existing`: whenever any node reports it had joined, each drain waits
 * for the step that uncordons the node or batch ahead). Each step waits on the reports of a bounded
 * number of nodes (the node ahead, its own, the batch before the one it waits for: at most
 * `maxUnavailableWorkers`), shared by the steps of a batch, and on one flag for the whole cluster, so the
 * program and the state grow linearly with the nodes.
 * A worker whose machine is gone (`gone`) keeps its steps, frozen (nothing runs, retained on delete), and
 * gets `forget` (its Node object deleted from the first control-plane node).
 *
 * @throws Error when the cluster has no control-plane node or an option is not a whole number >= 1.
 */
export function buildPlan(cluster: ValidCluster, options: PlanOptions = {}): Step[] {
  const joinWindow = wholeNumber("maxConcurrentJoins", options.maxConcurrentJoins ?? 10, 1);
  const workerWindow = wholeNumber("maxUnavailableWorkers", options.maxUnavailableWorkers ?? 1, 1);
  const first = cluster.controlPlane[0];
  if (first === undefined) throw new Error("nodes: no control-plane node");
  const cp1 = first.name;
  const to = cluster.version.text;
  const from = options.fromVersion;
  const change = from !== undefined && from !== to ? `${from} to ${to}` : `to ${to}`;
  const steps: Step[] = [];
  const add = (node: ValidNode, runsOn: string, kind: StepKind, after: string[], line?: LineWait, wave?: Pick<Step, "members" | "group" | "material" | "ahead" | "uncordonsFirst">): string => {
    // A group's step is named after its group (`batch_1-drain`), a node's after its node.
    const id = stepId(wave?.group?.id ?? node.name, kind.action);
    const frozen = node.gone && kind !== forget;
    steps.push({
      id,
      node: node.name,
      ...wave,
      runsOn,
      action: kind.action,
      kind,
      // A gone machine's steps keep their place (and their resources) but wait for nothing and run nothing.
      after: frozen ? [] : after,
      ...(line !== undefined && !frozen ? { line } : {}),
      summary: frozen ? "the machine is gone: kept in the state as it is, nothing runs, retained on delete" : kind.summary({ cluster, node, firstControlPlane: cp1, change, members: wave?.members, uncordonsFirst: wave?.uncordonsFirst }),
      ...(frozen ? { frozen } : {}),
    });
    return id;
  };
  /**
   * A control-plane node's rollout unit after `after` (kubeadm's order: kubeadm, drain, kubelet), two
   * sessions on the node (`upgrade`, `kubelet`) and two on the first control-plane node (`drain`,
   * `node-metadata`, which uncordons); returns the id of its last step. (Workers roll out in batches.)
   */
  const unit = (node: ValidNode, after: string[], drainLine?: LineWait): string => {
    const upgraded = add(node, node.name, upgrade, after);
    const drained = add(node, cp1, drain, [upgraded], drainLine);
    const kubeletDone = add(node, node.name, kubelet, [drained]);
    return add(node, cp1, node === first ? firstNodeMetadata : nodeMetadata, [kubeletDone]);
  };
  const lineNode = (node: ValidNode, joining: string): LineNode => ({ node: node.name, unitDone: stepId(node.name, "node-metadata"), joining, upgraded: stepId(node.name, upgrade.action) });

  // Every node's prepare (which checks kubeadm's version rules there) before anything changes.
  const prepared = cluster.nodes.map((node) => add(node, node.name, prepare, []));
  const made = add(first, cp1, init, prepared.filter((_, i) => !cluster.nodes[i]?.gone));
  const read = add(first, cp1, clusterConfigRead, [made]);
  const configured = add(first, cp1, clusterConfig, [read]);
  unit(first, [configured]);
  // The node the next join waits for: at the target once its unit is done, or (new) once it joined.
  let ahead = lineNode(first, configured);

  for (const node of cluster.controlPlane.slice(1)) {
    const material = add(node, cp1, joinToken, [configured], { ready: [ahead], readyUntil: "upgraded" });
    const joined = add(node, node.name, join, [stepId(node.name, "prepare"), material]);
    // Its drain once the node ahead is uncordoned (its unit done), or (new cluster) joined.
    unit(node, [joined], { ready: [ahead], existing: { ifAnyJoined: [cp1, node.name], after: [ahead.unitDone] } });
    ahead = lineNode(node, joined);
  }
  const controlPlaneDone = ahead;
  // The workers' join material (so their joins and units, a worker's join waits for its wave's): once the last control-plane node ran its
  // `kubeadm upgrade` (every API server at the target); its drain, kubelet and uncordon go on beside the
  // first batch's `kubeadm upgrade node`, whose drain waits for its whole unit.
  const controlPlaneUpgraded: LineWait = { ready: [controlPlaneDone], readyUntil: "upgraded" };
  const live = cluster.workers.filter((n) => !n.gone);
  // Join waves: the workers (not gone) in plan order, joinWindow at a time. Each wave's join material
  // (one token) comes after the joins of the wave before; its node metadata after its members' own.
  const waves = chunks(live, joinWindow);
  const waveOf = new Map(waves.flatMap((members, k) => members.map((n) => [n.name, k] as const)));
  // Rollout batches: the same workers, workerWindow at a time, each drained and uncordoned in one step.
  const batches = chunks(live, workerWindow);
  const batchOf = new Map(batches.flatMap((members, b) => members.map((n) => [n.name, b] as const)));
  const joinPlace = new Map(live.map((n, i) => [n.name, i] as const));
  const materialOf: string[] = [];
  const tokens = new Set<string>();
  // The material of the first control-plane join, when there is one: the workers' tokens come after it.
  const second = cluster.controlPlane[1];
  const firstJoinMaterial = second !== undefined ? [stepId(second.name, joinToken.action)] : [];
  const token = (node: ValidNode): string => {
    const id = stepId(node.name, workerJoinToken.action);
    // On a worker that joins in this run it runs no command and waits for nothing more (its join waits for
    // the control plane through its wave's join-material), so the idle tokens are done before that wave.
    // They come after the first control-plane join's material, which that join waits for too, so they run
    // beside that join, not ahead of it: becoming ready with its material, one engine operation each (and
    // a save of the state) held it back by up to 2.1 s with 47 workers; after it, the join got a slot at
    // once in every run measured (README, Performance).
    // On a worker that had joined, its update (a changed script: joinTokenTtl, a new package version) runs
    // `kubeadm token create` on the first control-plane node: once every API server is at the target.
    if (!tokens.has(id)) add(node, cp1, workerJoinToken, [configured, ...firstJoinMaterial], { ...controlPlaneUpgraded, ifJoined: node.name });
    tokens.add(id);
    return id;
  };
  /** A worker's steps up to its `upgrade` (its batch's drain follows once every member's is done). */
  const upToUpgrade = (node: ValidNode, b: number): void => {
    const k = waveOf.get(node.name) as number;
    const members = (waves[k] as ValidNode[]).map((n) => n.name);
    // A sliding window of joins: after the join of the worker joinWindow places before it.
    const ahead = live[(joinPlace.get(node.name) as number) - joinWindow];
    const aheadJoined = ahead !== undefined ? [stepId(ahead.name, "join")] : [];
    if (members[0] === node.name) {
      // After the members' own join-tokens: one that runs (a node that had joined) claims first, and
      // the wave's pk_claim_once then adds no second claim. And after the join its first member waits
      // for: the token's lifetime starts when the wave can start joining, not hours before; a failed
      // join stops the run with at most the next wave's token made (stale if fixed hours later).
      const own = (waves[k] as ValidNode[]).map(token);
      materialOf[k] = add(first, cp1, joinMaterial, [configured, ...own, ...aheadJoined], controlPlaneUpgraded, { members, group: joinWave(k) });
    }
    const material = token(node);
    const waveMaterial = materialOf[k] as string;
    const joined = add(node, node.name, join, [stepId(node.name, "prepare"), material, waveMaterial, ...aheadJoined], undefined, { material: waveMaterial });
    // kubeadm's files (kubeadm's own order: `kubeadm upgrade node`, then drain) beside the drain of the batch
    // ahead: after what that drain waits for besides its members' upgrades (the batch before it at the target).
    add(node, node.name, upgrade, [joined], b === 0 ? undefined : drainLine(b - 1));
  };
  /**
   * A worker's wait for its batch's drain (its kubelet) or for the step that uncordons it (its node
   * metadata), only when it had joined before this run: only then is it drained in this run (its prepare
   * ran and reported it), so a worker that joins in this run goes from its join through its idle upgrade,
   * kubelet and node metadata without waiting for the batch steps (two fewer steps one after another
   * behind each worker's join: the end of a new cluster's provisioning).
   */
  const ownDrain = (node: ValidNode, step: string): LineWait => ({ existing: { ifAnyJoined: [node.name], after: [step] } });
  /**
   * Each member's own node metadata, after its kubelet and (when it had joined, `ownDrain`) the step that
   * uncordoned it, which waits for that kubelet only when the member had joined before this run; a join
   * wave's after its last member's.
   */
  const metadataAfter = (members: ValidNode[], uncordoned: string): void => {
    for (const node of members) {
      add(node, cp1, workerNodeMetadata, [stepId(node.name, kubelet.action)], ownDrain(node, uncordoned));
      const k = waveOf.get(node.name) as number;
      const wave = waves[k] as ValidNode[];
      if (wave[wave.length - 1] === node) {
        add(first, cp1, waveMetadata, wave.map((m) => stepId(m.name, "node-metadata")), undefined, { members: wave.map((m) => m.name), group: joinWave(k) });
      }
    }
  };
  /**
   * A member of the batch before a drain, as a node ahead in that drain's line: its kubelet once it had
   * joined before this run, its join when it joins in this run.
   */
  const kubeletAhead = (node: ValidNode, b: number): LineNode => ({
    node: node.name,
    unitDone: stepId(node.name, kubelet.action),
    joining: stepId(node.name, join.action),
    upgraded: stepId(node.name, upgrade.action),
  });
  /**
   * What batch `b`'s drain waits for besides its members' upgrades, which the next batch's upgrades wait
   * for too (they run beside that drain). The first batch drains once the control plane's last unit is
   * done (a control-plane node and workers are never cordoned at once), checked in the cluster too (its
   * marks, `ahead`). Each later one after the kubelets of the batch before: its first act is to uncordon
   * that batch, which must not come before their kubelets, so one batch is cordoned at a time. Per member
   * of that batch, as its prepare report says: a member that joins in this run (at the target: never
   * drained, no mark to remove) is waited for until it joined, so a new cluster's batch steps, which run
   * nothing, do not wait one after another (a whole chain of them did: about 0.4 s per batch of
   * provisioning). A member that had joined but reports it had not (its prepare has not run since it
   * joined) is never drained either: its drain verdict comes from an upgrade step that runs for a
   * version, runtime or gate change, which runs its prepare again. When the first control-plane node or a
   * member had joined, the drain also waits for the drain before it (`existing`), so the line holds across
   * a batch whose members join in this run or report stale: without it, a drain could cordon its batch
   * while the batch two ahead (or the last control-plane node) was still cordoned, and the upgrades that
   * share this line could run three batches ahead of their kubelets. (Left: when the first control-plane
   * node's report is older than the cluster, two batches in a row none of whose members reports it had
   * joined still break the line, as before this wait.)
   */
  const names = (b: number): string[] => (batches[b] as ValidNode[]).map((n) => n.name);
  const drainLine = (b: number): LineWait =>
    b === 0
      ? { ready: [controlPlaneDone], existing: { ifAnyJoined: [cp1, ...names(b)], after: [controlPlaneDone.unitDone] } }
      : { ready: (batches[b - 1] as ValidNode[]).map((n) => kubeletAhead(n, b)), existing: { ifAnyJoined: [cp1, ...names(b)], after: [stepId(batchId(b - 1), batchDrain.action)] } };
  /**
   * A batch's drain (after the first: once the batch before ran its kubelets, which the drain uncordons
   * first), its members' kubelet; the batch before's node metadata; for the last batch its uncordon and
   * its members' node metadata.
   */
  const rollBatch = (b: number): void => {
    const members = batches[b] as ValidNode[];
    const upgrades = names(b).map((m) => stepId(m, upgrade.action));
    const before = batches[b - 1];
    const drained =
      before === undefined
        ? add(first, cp1, batchDrain, upgrades, drainLine(b), { members: names(b), group: rolloutBatch(b), ahead: cluster.controlPlane.map((n) => n.name) })
        : add(first, cp1, batchDrain, upgrades, drainLine(b), { members: names(b), group: rolloutBatch(b), uncordonsFirst: names(b - 1) });
    if (before !== undefined) metadataAfter(before, drained);
    const kubelets = members.map((node) => add(node, node.name, kubelet, [stepId(node.name, upgrade.action)], ownDrain(node, drained)));
    if (b === batches.length - 1) {
      // The last batch's uncordon right after its kubelets; its members' node-metadata after it.
      metadataAfter(members, add(first, cp1, batchUncordon, kubelets, undefined, { members: names(b), group: rolloutBatch(b) }));
    }
  };
  cluster.workers.forEach((node) => {
    if (node.gone) {
      // Its steps keep their place (and resources), frozen; `forget` deletes its Node object.
      token(node);
      for (const kind of [join, upgrade, kubelet]) add(node, node.name, kind, []);
      add(node, cp1, workerNodeMetadata, []);
      add(node, cp1, forget, [configured], { ready: [controlPlaneDone] });
      return;
    }
    const b = batchOf.get(node.name) as number;
    upToUpgrade(node, b);
    const members = batches[b] as ValidNode[];
    if (members[members.length - 1] === node) rollBatch(b);
  });
  return steps;
}

/**
 * The id of the `k`-th join wave (from 0), `workers_<k+1>`: the prefix of its steps' ids. The `_` keeps it
 * apart from every node name (RFC 1123: lower-case letters, digits, `-` and `.`).
 */
export function waveId(k: number): string {
  return `workers_${k + 1}`;
}

/**
 * The id of the `b`-th rollout batch of workers (from 0), `batch_<b+1>`: the prefix of its `drain` and
 * `uncordon` steps' ids (the `_` keeps it apart from every node name).
 */
export function batchId(b: number): string {
  return `batch_${b + 1}`;
}

/** The `k`-th join wave (from 0) as a step's group. */
const joinWave = (k: number): StepGroup => ({ kind: "join wave", id: waveId(k) });
/** The `b`-th rollout batch (from 0) as a step's group. */
const rolloutBatch = (b: number): StepGroup => ({ kind: "rollout batch", id: batchId(b) });

/** `items` in runs of `size`, in order (the last one may be shorter). */
function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  items.forEach((item, i) => {
    if (i % size === 0) out.push([]);
    (out[out.length - 1] as T[]).push(item);
  });
  return out;
}

/**
 * The steps a step's `line` makes it wait for, given which nodes had joined the cluster before this run
 * (their `prepare` report): a node ahead that had joined is waited for until its `readyUntil` stage
 * (default its unit done), one that had not until it joined; `line.existing.after` when any of its
 * `ifAnyJoined` had joined. Each step once, in that order. Nothing at all when `line.ifJoined` names a
 * node that had not joined.
 */
export function lineAfter(line: LineWait | undefined, joined: (node: string) => boolean): string[] {
  if (line === undefined) return [];
  if (line.ifJoined !== undefined && !joined(line.ifJoined)) return [];
  const ready = (line.ready ?? []).map((n) => (joined(n.node) ? readyStep(line, n) : n.joining));
  const existing = line.existing !== undefined && line.existing.ifAnyJoined.some(joined) ? line.existing.after : [];
  return [...new Set([...ready, ...existing])];
}

/** The step a line waits for on a node in `line.ready` that had joined: its `readyUntil` stage (default its unit done). */
export function readyStep(line: LineWait, n: LineNode): string {
  return n[line.readyUntil ?? "unitDone"];
}

/**
 * Every step a line may make its step wait for, whatever the nodes report ({@link lineAfter} picks among
 * them): each node ahead's `readyUntil` stage and its join, and the steps it waits for in a cluster that existed.
 */
export function lineSteps(line: LineWait): string[] {
  return [...(line.ready ?? []).flatMap((n) => [readyStep(line, n), n.joining]), ...(line.existing?.after ?? [])];
}

/** The nodes whose `prepare` reports decide a line's waits ({@link lineAfter}), in a fixed order. */
export function lineNodes(line: LineWait): string[] {
  return [...new Set([...(line.ifJoined !== undefined ? [line.ifJoined] : []), ...(line.ready ?? []).map((n) => n.node), ...(line.existing?.ifAnyJoined ?? [])])];
}
