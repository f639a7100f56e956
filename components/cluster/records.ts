/**
 * The component's own memory of the last `pulumi up`, kept in the stack's state by the engine and read
 * back at preview, so that the component needs nothing from the caller (no stack outputs, no
 * StackReference): two `command.remote.Command` resources that run no command at all (no create,
 * update or delete), whose only use is the value they record in `stdin` (JSON; an input, so a new value
 * is an update, never a replacement).
 *
 * - `<cluster>-init-node`: the node that ran `kubeadm init`. Its value is never updated
 *   (`ignoreChanges`), so it always reads back the first value: the preview refuses a plan whose first
 *   control-plane node is another one.
 * - `<cluster>-members`: the version, the gate's state, and each node's name, role, declared CRI socket
 *   and gone mark, as the last `up` whose every step succeeded asked. At preview its changes are ignored,
 *   so it reads back that value and the component can say, before anything runs, which nodes a plan
 *   removes (drain, reset, delete; nothing for a node marked gone) or switches to another runtime, and
 *   from which version it upgrades. An `up` records the new
 *   value after every step (it depends on them all), so an `up` that failed midway (a blocked drain, a
 *   failed `kubeadm upgrade apply`) leaves the old value: the next preview still names the switch and
 *   the version step from where the cluster was (a skipped minor after a half-done upgrade is refused).
 *   The deletes of removed nodes run after the program, so they are not covered. Unlike the other
 *   record it runs a command: its create/update write the node names to the first control-plane node
 *   (one session when they change) and its delete removes them (scripts/members.ts), so the destructive
 *   deletes there tell a removed node from a replaced step.
 *
 * Nothing here decides the order of the rollout or whether a node is new: the nodes and the cluster
 * do that at run time.
 */
import * as pulumi from "@pulumi/pulumi";
import { valueCommand, type ValueScripts } from "./command";
import { membersFileScripts } from "../scripts/members";
import type * as inputs from "@pulumi/command/types/input";
import type { ValidCluster } from "../kubeadm/types";

/** One node as the members record keeps it. */
export interface MemberRecord {
  name: string;
  role: string;
  /** The declared CRI socket (normalised), or undefined when it is detected on the node. */
  criSocket?: string;
  /**
   * The machine was marked `gone` in the `up` that wrote the record (its Node deleted, its steps frozen and
   * retained on delete: taking it out of `nodes` runs nothing on it; the preview refuses taking the mark
   * off while it stays there, transitions.ts); absent otherwise, and in records of earlier versions of this package.
   */
  gone?: true;
}

/** What the members record keeps. */
export interface MembersRecord {
  /** The version the last `up` asked for, `v1.34.2`. */
  version: string;
  /** Whether NodeLocalCRISocket was in effect (absent in records of earlier versions of this package). */
  nodeLocalCriSocket?: boolean;
  nodes: MemberRecord[];
}

/** The key that marks the members value a preview gives a record not yet created (never recorded). */
const NOT_RECORDED = "notRecordedYet";

/** The members record of this cluster as the program asks for it now. */
export function membersOf(cluster: ValidCluster): MembersRecord {
  return {
    version: cluster.version.text,
    nodeLocalCriSocket: cluster.nodeLocalCriSocket,
    nodes: cluster.nodes.map((n) => ({ name: n.name, role: n.role, ...(n.criSocket !== undefined ? { criSocket: n.criSocket } : {}), ...(n.gone ? { gone: true as const } : {}) })),
  };
}

/** What the records read back. */
export interface Recorded {
  /** The node that ran `kubeadm init`: recorded when the cluster was first planned, never changed. */
  initNode: pulumi.Output<string | undefined>;
  /**
   * At preview: the members the last `up` recorded once all its steps had succeeded (undefined on a new
   * cluster); at `up`: undefined (not read: the record is written there, after the steps).
   */
  lastMembers: pulumi.Output<MembersRecord | undefined>;
  /**
   * Record this program's members: at `up`, registered after `steps` (depending on each), so the value
   * changes only when every one of them succeeded; `steps` undefined (a refused plan): the recorded
   * value is kept. At preview it does nothing (the record was read). Call it exactly once.
   */
  recordMembers(steps: pulumi.Resource[] | undefined): void;
}

function record(name: string, value: unknown, connection: pulumi.Input<inputs.remote.ConnectionArgs>, keep: boolean, parent: pulumi.Resource, formerNames: string[], extra: { scripts?: ValueScripts; retainOnDelete?: boolean } = {}) {
  return valueCommand(parent, name, value, connection, keep, formerNames, undefined, extra).stdin.apply((text): unknown => {
    try {
      return text ? JSON.parse(text) : undefined;
    } catch {
      return undefined;
    }
  });
}

/**
 * Register the two records under `parent` and read them back.
 * @param connection the first control-plane node's connection (pulumi-command requires one; it is never dialled).
 * @param formerClusterNames earlier names of the Cluster: the records are aliased to theirs.
 * @param retainOnDelete the Cluster's: the members record's delete (which removes the node list) does not run.
 */
export function records(
  parent: pulumi.Resource,
  clusterName: string,
  cluster: ValidCluster,
  connection: pulumi.Input<inputs.remote.ConnectionArgs>,
  formerClusterNames: string[] = [],
  retainOnDelete = false,
): Recorded {
  const first = cluster.controlPlane[0]?.name;
  const former = (suffix: string) => formerClusterNames.map((f) => `${f}-${suffix}`);
  const init = record(`${clusterName}-init-node`, first, connection, true, parent, former("init-node"));
  const membersName = `${clusterName}-members`;
  // The record also keeps the list of nodes on the first control-plane node (scripts/members.ts), the
  // same scripts at preview and at up (so an unchanged cluster previews no change).
  const listed = { scripts: { ...membersFileScripts(first ?? "", membersName, cluster.nodes.map((n) => n.name)), runsOn: first ?? "" }, retainOnDelete };
  const initNode = init.apply((v) => (typeof v === "string" ? v : undefined));
  if (!pulumi.runtime.isDryRun()) {
    return {
      initNode,
      // Not read at `up` (the record is written there, after the steps): the plan output after an `up`
      // compares the cluster with what this `up` records, so it says "nothing to change".
      lastMembers: pulumi.output(membersOf(cluster)),
      recordMembers: (steps) => {
        valueCommand(parent, membersName, membersOf(cluster), connection, steps === undefined, former("members"), steps ?? [], listed);
      },
    };
  }
  // At preview a record that exists reads back its recorded value (its stdin changes are ignored); one
  // that is still to be created (a new cluster) reads back what it is given here: the marker tells the two
  // apart, and an `up` never records it.
  const members = record(membersName, { ...membersOf(cluster), [NOT_RECORDED]: true }, connection, true, parent, former("members"), listed);
  return {
    initNode,
    lastMembers: members.apply((v) => {
      const m = v as MembersRecord | undefined;
      return m !== undefined && m !== null && typeof m === "object" && !(NOT_RECORDED in m) && Array.isArray(m.nodes) && typeof m.version === "string" ? m : undefined;
    }),
    recordMembers: () => undefined,
  };
}
