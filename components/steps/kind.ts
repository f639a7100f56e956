/**
 * Layer 3, step kinds: what a step kind is. Each kind (prepare, init, join, upgrade, ...) lives in ONE
 * file of this folder that holds everything about it: its plan words, the data it reads on stdin and
 * from which earlier steps, its node script and its delete. The plan (components/plan) places steps of
 * these kinds in order; the component (components/cluster) only loops over the plan's steps and hands
 * each to `stepCommand`. Adding a kind is a new file here plus the line in `buildPlan` that places it.
 *
 * Kinds are plain data and pure functions: no Pulumi and no I/O. What is only known at run time (a
 * detected CRI endpoint, an earlier step's stdout) reaches them through {@link RunValues}.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";
import type { StepScripts } from "../scripts/types";

/** A step kind's name, e.g. `prepare`; the last part of its step id. */
export type StepAction = string;

/** A join wave (workers joining together) or a rollout batch (workers cordoned together), by id. */
export interface StepGroup {
  kind: "join wave" | "rollout batch";
  /** `workers_<k>` (a join wave) or `batch_<b>` (a rollout batch). */
  id: string;
}

/** One step of the plan. */
export interface Step {
  /** `<node>-<action>`; the resource is named `<cluster>-<id>`. Unique in a plan. */
  id: string;
  /**
   * The node the step is about. A join wave's step (`members` set) is about the cluster: its node is
   * the first control-plane node, which runs it.
   */
  node: string;
  /**
   * A join wave's or rollout batch's step: the workers of the wave or batch, in plan order (its
   * `triggers`: a change of them replaces the step). Unset for a node's step.
   */
  members?: string[];
  /**
   * A join wave's or rollout batch's step: which group it belongs to, and the group's id (the prefix of
   * its step id: `workers_1`, `batch_1`). Unset for a node's step.
   */
  group?: StepGroup;
  /**
   * A worker's `join`: the id of its join wave's `join-material` step, whose stdout is its join
   * material. Unset: the node's own `join-token` step makes it (control-plane nodes).
   */
  material?: string;
  /**
   * The first rollout batch's `drain`: the control-plane nodes, whose cordon marks it waits on in the
   * cluster (the control plane's last unit uncordons them). Unset for other steps.
   */
  ahead?: string[];
  /**
   * A later rollout batch's `drain`: the members of the batch before, which it uncordons first (what
   * this component cordoned), after their kubelet steps. Unset for other steps.
   */
  uncordonsFirst?: string[];
  /** The node whose SSH connection runs it (the first control-plane node for cluster-side steps). */
  runsOn: string;
  action: StepAction;
  /** The step's kind: its words, inputs, scripts. */
  kind: StepKind;
  /** Ids of the steps that must have finished first. */
  after: string[];
  /**
   * Waits in the rollout line that depend on which nodes had joined the cluster before this run, as
   * each node's own `prepare` step reported it (resolved at run time with `lineAfter`, components/plan).
   */
  line?: LineWait;
  /**
   * The node's machine is gone: the step's resource is registered with its recorded inputs kept
   * (nothing runs, create included) and retained on delete, so removing the node later runs nothing.
   */
  frozen?: boolean;
  /** What it does, in plain words. */
  summary: string;
}

/** A node ahead in the rollout line, and the steps after which it is at the target in the cluster. */
export interface LineNode {
  /** The node. */
  node: string;
  /**
   * Its rollout unit's last step: what to wait for when the node had joined before this run (a member of
   * the rollout batch before a batch's drain: its `kubelet`, the drain uncordons it).
   */
  unitDone: string;
  /**
   * What to wait for when it had not (it joins at the target in this run, so its unit rolls nothing
   * out): its `join`; for the first control-plane node, `cluster-config` after `init`.
   */
  joining: string;
  /** Its `upgrade` step (the kubeadm package and `kubeadm upgrade apply|node`): once done, its API server (a control-plane node's) is at the target. */
  upgraded: string;
}

/**
 * Waits of a step decided by what the nodes reported in their `prepare` step (`joined=yes|no`), never
 * by the stack: a node that had not joined before this run joins at the target and has nothing to roll
 * out, so it neither waits in the rollout line nor holds it up.
 */
export interface LineWait {
  /** Wait for each of these nodes: if it had joined, until `readyUntil` (default its unit done), else until `joining`. */
  ready?: LineNode[];
  /**
   * How far each node in `ready` that had joined must be: `unitDone` (the default: its whole unit), or
   * `upgraded` (a control-plane node's `join-token`, which the node's join and unit follow, and the workers'
   * join material: the control-plane node ahead has run its `kubeadm upgrade`, so its API server is at the
   * target; its drain, kubelet and uncordon go on beside this node's `kubeadm upgrade node`, whose `drain`
   * then waits for that node's whole unit: one node cordoned at a time).
   */
  readyUntil?: "upgraded" | "unitDone";
  /**
   * Steps to wait for whenever any of `ifAnyJoined` had joined before this run (the first control-plane
   * node, or the members this step drains: then the cluster existed and this run may drain), whatever
   * the nodes ahead report; none in a new cluster (nothing is rolled out, so its idle steps do not wait
   * one after another). This keeps the line whole across nodes that join in this run or whose report
   * predates their join (a prepare that has not run since): a drain waits for the step that uncordons the
   * node or batch ahead, so one node or batch is cordoned at a time. Only a node whose prepare ran in this
   * run is drained, and its report says it had joined. A worker's own `kubelet` and `node-metadata` use
   * it too, with the worker alone in `ifAnyJoined`: they wait for its batch's drain and the step that
   * uncordons it only when it had joined (only then is it drained).
   */
  existing?: { ifAnyJoined: string[]; after: string[] };
  /**
   * The node whose report gates every wait of this line: when it had not joined before this run, the step
   * waits for none of them (a worker's `join-token`, which runs no command on a worker that joins in this
   * run; on a worker that had joined, its update runs `kubeadm token create` on the first control-plane
   * node, which must not run beside that node's `kubeadm upgrade apply`, when its API server restarts).
   */
  ifJoined?: string;
}

/** Settings of the cluster that shape the scripts (plain values, defaults applied). */
export interface StepSettings {
  /** Lifetime of a join's bootstrap token, kubeadm duration text (`2h0m0s`). */
  joinTokenTtl: string;
  /** Seconds the kubelet must stay active after a restart to count as healthy (whole number >= 0). */
  kubeletSettleSeconds: number;
  /** `kubectl drain --timeout`, seconds. */
  drainTimeoutSeconds: number;
  /** `kubectl drain --grace-period`, seconds; undefined = each pod's own. */
  drainGracePeriodSeconds?: number;
  /** Workers cordoned at the same time, at most (whole number >= 1; the plan checks it). */
  maxUnavailableWorkers: number;
  /** A node's kubeadm install command template for upgrades (`{version}`, `{minor}`), or undefined for none. */
  kubeadmInstall(node: string): string | undefined;
  /** A node's kubelet and kubectl install command template for upgrades, or undefined for none. */
  kubeletInstall(node: string): string | undefined;
}

/** What a kind's functions know about their step. */
export interface StepContext {
  cluster: ValidCluster;
  /** The node the step is about. */
  node: ValidNode;
  step: Step;
  settings: StepSettings;
  /**
   * The step's resource name, `<cluster>-<step id>`: the owner a step with a destructive delete records
   * on the node when it creates (`pk_claim`), and that its delete must find there before it acts.
   */
  owner: string;
  /** The step's resource names under the Cluster's earlier names (its aliases): their claims become `owner`'s. */
  formerOwners: string[];
  /** The resource name of another step of this cluster (`<cluster>-<id>`), for messages and claims. */
  resourceName(id: string): string;
  /** The names of another step of this cluster under the Cluster's earlier names (as `formerOwners` for this step). */
  formerResourceNames(id: string): string[];
}

/** Values known only at run time, for a kind's scripts and stdin. */
export interface RunValues {
  /** The node's normalised CRI endpoint: declared, or as the prepare step detected it. */
  endpoint: string;
  /** The stdout of an earlier step the kind named in `stdin.reads`. */
  stdout(id: string): string;
  /**
   * The normalised CRI endpoint of a node the kind named in `stdin.endpointsOf` (a join wave's members).
   * @throws Error for a node it did not name.
   */
  endpointOf(node: string): string;
}

/** Words for a kind's plan line. */
export interface PlanWords {
  cluster: ValidCluster;
  node: ValidNode;
  /** The first control-plane node (it runs `kubeadm init`, and kubectl for cluster-side steps). */
  firstControlPlane: string;
  /** `v1.33.2 to v1.34.2` when the version of the last `up` is known and differs, else `to v1.34.2`. */
  change: string;
  /** A join wave's step: the workers of the wave. */
  members?: string[];
  /** A later rollout batch's drain: the batch before, which it uncordons first. */
  uncordonsFirst?: string[];
}

/** A value a step's scripts depend on, that the step shows at the head of its stdin (so in `pulumi preview --diff`). */
export type ShownValue = "kubernetesVersion" | "criSocket" | "NodeLocalCRISocket";

/** A step kind: everything the plan and the component need about one kind of step. */
export interface StepKind {
  action: StepAction;
  /** The plan line's words (after the step's name and order). */
  summary(w: PlanWords): string;
  /**
   * The step's scripts (create, update, delete). Render errors (a bad option) are thrown at
   * construction, so at preview.
   * @param endpoint the node's CRI endpoint; the declared one (or kubeadm's default) unless
   *   `scriptsUseEndpoint`, then the resolved one (it may be detected).
   */
  scripts(ctx: StepContext, endpoint: string): StepScripts;
  /** The scripts need the node's resolved endpoint (`kubeadm reset --cri-socket`). */
  scriptsUseEndpoint?: boolean;
  /** Data the script reads on stdin. */
  stdin?: {
    /** Ids of earlier steps whose stdout the data is made from. */
    reads?(ctx: StepContext): string[];
    /** Nodes whose resolved CRI endpoint the data holds (`RunValues.endpointOf`); default none. */
    endpointsOf?(ctx: StepContext): string[];
    /** The data carries a secret (join material): the stdin is marked secret. */
    secret?: boolean;
    render(ctx: StepContext, v: RunValues): string;
  };
  /**
   * The step's stdout carries a secret. `true`: stdout and stderr secret, nothing logged (join material,
   * whose tools may echo it on either stream). `"stdout"`: only the stdout is secret and only the
   * stderr is logged (the first control-plane node's `node-metadata`, whose stdout is the admin
   * kubeconfig and whose stderr is kubectl's messages). Default: nothing secret.
   */
  secretOutput?: boolean | "stdout";
  /** The step's stdout is data for later steps (a file snapshot, a ConfigMap): only stderr is logged. */
  dataOutput?: boolean;
  /**
   * The stdin carries bulk data people do not read (prepare: the packed shell library): it is hidden
   * from `pulumi preview --diff` like the scripts; the step's values show on the node's other steps.
   */
  stdinHiddenFromDiff?: boolean;
  /** kubeadm init/join run once: a later change of their stdin (configuration) is not an update. */
  runsOnce?: boolean;
  /**
   * Values whose change REPLACES the step (pulumi-command's `triggers`): its create runs again. Only for
   * a kind without a delete (`stepCommand` refuses otherwise): the join waves' steps, whose triggers are
   * their members.
   */
  triggers?(ctx: StepContext): string[];
  /**
   * The values whose change changes this kind's scripts or stdin, in words at the head of the step's
   * stdin (components/steps/values.ts), where `pulumi preview --diff` shows them. Only values that change
   * the step's inputs anyway: another one would make the step run again for nothing.
   */
  shows?: readonly ShownValue[];
  /**
   * A rollout step with nothing to do on a node that joins at the target in this run: on a node whose
   * `prepare` reported `joined=no` (a batch's step: every member's did), its create runs no command (no
   * SSH session); its update, in a later rollout, runs the script.
   */
  idleOnJoin?: boolean;
  /**
   * With `idleOnJoin`: the create that ran nothing stays so (`ignoreChanges: ["create"]`). Once the
   * node's `prepare` reports `joined=yes` (its next run, every upgrade) the create input would change
   * from unset to the script, which pulumi-command runs as an update; for a kind whose update does work
   * nobody asked for (a worker's `join-token`: a bootstrap token on the first control-plane node; a
   * worker's `node-metadata`: its join wave made its edits) that change alone must not update it. A change of the script still does (the update input changes too).
   */
  idleCreateKept?: boolean;
  /** For the prepare step: whether the node had joined a cluster before this run, read from its stdout. */
  joinedFrom?(stdout: string): boolean;
  /** For the prepare step: the node's CRI endpoint, read from its stdout (declared ones are used as given). */
  endpointFrom?(node: string, stdout: string): string;
}
