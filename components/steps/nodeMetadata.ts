/**
 * Step kind `node-metadata`: cluster-side edits of one Node, with kubectl on the first control-plane node
 * (DESIGN.md: cluster-side edits run there, in step order): labels, and the
 * `kubeadm.alpha.kubernetes.io/cri-socket` annotation removed (gate in effect) or set (legacy) to the
 * node's endpoint, which arrives on stdin (it may have been detected on the node).
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { ADMIN_KUBECONFIG, KUBECTL, drainCommand } from "../scripts/kubectl";
import type { StepScripts } from "../scripts/types";
import type { StepContext, StepKind } from "./kind";
import { stillWantedLines } from "../scripts/members";
import { claimCall, releasingDelete } from "../scripts/claim";

export { CRI_SOCKET_ANNOTATION, MANAGED_LABELS_ANNOTATION } from "../scripts/kubectl";


/** What the node-metadata step needs. */
export interface NodeMetadataInput {
  node: string;
  labels: Record<string, string>;
  /** true: remove the annotation; false: set it to the endpoint read from stdin (one line). */
  nodeLocalCriSocket: boolean;
  /**
   * The target version: part of the text so the step runs again (and uncordons) after every rollout (a
   * control-plane node). Undefined for a worker: the next rollout batch's `drain` (first thing), or the
   * last batch's `uncordon` step, does that.
   */
  version?: string;
  /** kubectl drain timeout for the delete, in seconds. */
  drainTimeoutSeconds: number;
  /** kubectl drain --grace-period for the delete, seconds; undefined = each pod's own. */
  drainGracePeriodSeconds?: number;
  /**
   * Delete (the node leaves the stack): drain it, the first step of kubeadm's removal (its `join`
   * delete then resets it, its `join-token` delete deletes the Node). False for the first control-plane
   * node, which only goes with the whole cluster.
   */
  drainOnDelete: boolean;
  /** The step id: the scope of the ownership claim. */
  scope: string;
  /** The resource's logical name: the owner the claim names. */
  owner: string;
  /** Its names under the Cluster's earlier names (aliases), whose claims an update takes over. */
  formerOwners?: string[];
  /**
   * The first control-plane node: create and update end by printing the admin kubeconfig kubeadm wrote
   * (/etc/kubernetes/admin.conf), the step's only stdout (everything before it goes to stderr). The
   * step runs again after every upgrade (the version is in its text), when `kubeadm upgrade apply` has
   * renewed that file's certificate (`--certificate-renewal`, on by default).
   */
  printsAdminKubeconfig?: boolean;
}


/**
 * Create/update, with one read and at most three writes: uncordon, only when this component's drain
 * step cordoned the Node (`kubeadm.pulumi.com/cordoned`; a Node an operator cordoned stays so), then the
 * Node read again (kubectl uncordon exits 0 when its patch fails: one still cordoned fails the step and
 * keeps the mark); one
 * `kubectl label` that removes the labels it set before and no longer wants (recorded in the
 * `kubeadm.pulumi.com/labels` annotation) and sets the wanted ones; one `kubectl annotate` for that
 * record, the cordon mark (removed) and the cri-socket annotation (removed, or set to the node's endpoint), only
 * when one of them differs (the label runs whenever labels are wanted or dropped). Then a claim naming this resource (create: `pk_claim`; update: `pk_claim_once`).
 * Delete (the node leaves the cluster; `drainOnDelete`): drain it, only when this resource holds the
 * last claim (never on a rename or a replacement) and while the cluster and the Node exist; the claim is
 * dropped once the drain succeeded (a failed drain is tried again by the retried delete).
 */
export function nodeMetadataScripts(input: NodeMetadataInput): StepScripts {
  const node = shellQuote(input.node);
  const edits = nodeMetadataLines(input);
  // The admin kubeconfig: fd 3 is the step's stdout, everything else goes to stderr.
  const body = input.printsAdminKubeconfig
    ? [`[ -f ${ADMIN_KUBECONFIG} ] || pk_fail "no ${ADMIN_KUBECONFIG}: kubeadm init has not run"`, `exec 3>&1 1>&2`, ...edits]
    : edits;
  const last = input.printsAdminKubeconfig ? [`cat ${ADMIN_KUBECONFIG} >&3`] : [];
  const del = renderScript(input.node, [
    `[ -f ${ADMIN_KUBECONFIG} ] || exit 0`,
    ...releasingDelete(input.scope, input.owner, [
      ...stillWantedLines(input.node),
      `if pk_node_registered ${node} removal; then`,
      `  ${drainCommand(node, input.drainTimeoutSeconds, input.drainGracePeriodSeconds)} >&2 || pk_fail "drain failed; the node stays cordoned"`,
      `fi`,
    ]),
  ]);
  return {
    create: renderScript(input.node, [...body, claimCall("pk_claim", input.scope, input.owner), ...last]),
    update: renderScript(input.node, [...body, claimCall("pk_claim_once", input.scope, input.owner, input.formerOwners), ...last]),
    ...(input.drainOnDelete ? { delete: del } : {}),
  };
}

/** What one node's metadata edits need (`nodeMetadataLines`). */
export interface NodeMetadataEdits {
  node: string;
  labels: Record<string, string>;
  /** true: remove the annotation; false: set it to the endpoint read from stdin (one line). */
  nodeLocalCriSocket: boolean;
  /** The target version, as a comment line of the text (so the step runs again after every rollout); undefined: none. */
  version?: string;
}

/**
 * The bash lines (on the first control-plane node: a call of lib.sh's `pk_node_metadata`) of one Node's edits, with one read and at most three
 * writes: uncordon (only what this component's drain cordoned; read again after it, a Node still cordoned
 * fails the step, keeping its mark), one `kubectl label` (dropped managed
 * labels removed, wanted ones set), one `kubectl annotate` (the managed-labels record, the cordon mark
 * removed, the cri-socket annotation removed or set to the endpoint read as ONE line from stdin when
 * `nodeLocalCriSocket` is false). The annotate runs only when an annotation differs; the label whenever
 * labels are wanted or dropped (their values are not read: the same values change nothing). Fails (pk_fail) when the Node
 * is not registered, kubectl could not uncordon it, or the endpoint line is not a unix:// endpoint. Lines for several nodes may follow
 * each other in one script (each reads its own endpoint line, in order): the join waves' `node-metadata`.
 */
export function nodeMetadataLines(input: NodeMetadataEdits): string[] {
  const labels = Object.entries(input.labels).map(([k, v]) => shellQuote(`${k}=${v}`));
  const managed = Object.keys(input.labels).sort().join(",");
  return [
    ...(input.version !== undefined ? [`: rollout ${shellQuote(input.version)}`] : []),
    ["pk_node_metadata", shellQuote(input.node), input.nodeLocalCriSocket ? "yes" : "no", shellQuote(managed), ...labels].join(" "),
  ];
}

/**
 * The node-metadata scripts of a step's node; `withVersion`: the target version in the text (a
 * control-plane node); `printsAdminKubeconfig`: the kind's stdout is secret (`firstNodeMetadata`).
 */
function scriptsOf({ cluster, node, settings, step, owner, formerOwners }: StepContext, withVersion: boolean, printsAdminKubeconfig = false): StepScripts {
  return nodeMetadataScripts({
    formerOwners,
    drainOnDelete: node.name !== cluster.controlPlane[0]?.name,
    ...(printsAdminKubeconfig ? { printsAdminKubeconfig } : {}),
    scope: step.id,
    owner,
    node: node.name,
    labels: node.labels,
    nodeLocalCriSocket: cluster.nodeLocalCriSocket,
    ...(withVersion ? { version: cluster.version.text } : {}),
    drainTimeoutSeconds: settings.drainTimeoutSeconds,
    drainGracePeriodSeconds: settings.drainGracePeriodSeconds,
  });
}

/** `node-metadata`: uncordon (what this component cordoned), labels, the cri-socket annotation. */
export const nodeMetadata: StepKind = {
  action: "node-metadata",
  shows: ["kubernetesVersion", "criSocket", "NodeLocalCRISocket"],
  summary: ({ cluster, node }) => {
    const labels = Object.keys(node.labels).length;
    return `uncordon if this component cordoned it; ${labels > 0 ? `set ${labels} label(s); ` : ""}${cluster.nodeLocalCriSocket ? "remove" : "set"} the kubeadm.alpha.kubernetes.io/cri-socket annotation`;
  },
  scripts: (ctx) => scriptsOf(ctx, true),
  stdin: { render: (_ctx, v) => `${v.endpoint}\n` },
};

/**
 * `node-metadata` of the first control-plane node: as `nodeMetadata`, then it prints the admin
 * kubeconfig (the component's secret `kubeconfig` output: the stdout is secret, the stderr, kubectl's
 * messages, is logged). It runs after every upgrade of the node (kubeadm's `upgrade apply` renews the
 * admin certificate), so the output follows; one session where a separate read was a second.
 */
export const firstNodeMetadata: StepKind = {
  ...nodeMetadata,
  summary: (w) => `${nodeMetadata.summary(w)}; then read the admin kubeconfig (secret), again after every upgrade (upgrade apply renews its certificate; at ${w.cluster.version.text})`,
  scripts: (ctx) => scriptsOf(ctx, true, true),
  secretOutput: "stdout",
};

/**
 * `node-metadata` of a worker: as `nodeMetadata`, but its create runs no command on a worker that joins
 * in this run (`idleOnJoin`): its join wave's `node-metadata` step does the edits and writes this step's
 * claim, after it. Its text holds no version: a version rollout does not run it (the next rollout
 * batch's `drain` uncordons the worker first thing, or, in the last batch, its `uncordon` step). Its update (a label, gate or endpoint change) runs the script as
 * for any node. An idle create stays so (`idleCreateKept`): the wave did its edits and wrote its claim, so
 * the node's first rollout after its join (its `prepare` then reports it joined) does not run it.
 */
export const workerNodeMetadata: StepKind = {
  ...nodeMetadata,
  shows: ["criSocket", "NodeLocalCRISocket"],
  summary: (w) =>
    `${nodeMetadata.summary(w)}; on a node that joins in this run nothing runs here (its join wave's node-metadata does it); a version rollout does not run it (the next rollout batch's drain uncordons it, first thing; in the last batch, its uncordon)`,
  scripts: (ctx) => scriptsOf(ctx, false),
  idleOnJoin: true,
  idleCreateKept: true,
};
