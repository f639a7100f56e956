/**
 * Step kind `node-metadata` of a join wave (step id `<wave>-node-metadata`), on the first control-plane
 * node: for every member of the wave, in ONE session and with ONE read of their Nodes (lib.sh's
 * `pk_read_metadata`), what a worker's own `node-metadata` step does (`nodeMetadataLines`: uncordon
 * what this component cordoned, labels and their record, the cri-socket annotation removed or set to
 * the member's endpoint), after the ownership claims of every member's own
 * `node-metadata` step (whose create runs no command on a node that joins in this run, `idleOnJoin`), so
 * its delete (the drain when the node leaves the stack) finds its claim, even when an edit failed midway.
 *
 * It runs after every member's own `node-metadata` step (never racing one of its edits, never inside a
 * rollout window: nothing waits for it). No delete; its `triggers` are its members: a change of them
 * replaces it (its create runs again for the members). Its inputs hold no version, so an upgrade does not
 * run it; a change of the members' labels, of the gate or (gate off) of a member's endpoint changes its
 * script or stdin and runs it again, after the members' own steps applied the change (it changes nothing
 * then). It is not `ignoreChanges: ["stdin"]`: the engine gives a replacement the ignored inputs of the
 * resource it replaces, so a new member's endpoint would be missing from a replaced wave's stdin.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import type { StepKind } from "./kind";
import { nodeMetadataLines } from "./nodeMetadata";
import { memberClaimLine, memberClaims } from "./joinMaterial";
import { membersWords } from "./words";

/** `node-metadata` of a join wave: every member's Node edits in one session on the first control-plane node. */
export const waveMetadata: StepKind = {
  action: "node-metadata",
  shows: ["NodeLocalCRISocket"],
  summary: ({ cluster, members }) =>
    `for ${membersWords(members ?? [])}, in one session: uncordon if this component cordoned it; its labels; ${cluster.nodeLocalCriSocket ? "remove" : "set"} the kubeadm.alpha.kubernetes.io/cri-socket annotation; and each member's node-metadata claim; a change of the wave's members runs it anew`,
  scripts: (ctx) => {
    const { cluster } = ctx;
    // Every member's claim first: an edit that fails midway (a member's Node missing) leaves no member
    // unclaimed, so removing one later still drains it (its own step's delete).
    const claims = memberClaims(ctx, "node-metadata").map(memberClaimLine);
    const members = ctx.step.members ?? [];
    // Every member's Node read in one kubectl call first (pk_read_metadata), each member's edits then use it.
    const read = members.length > 1 ? [["pk_read_metadata", ...members.map(shellQuote)].join(" ")] : [];
    const lines = members.flatMap((m) => {
      const node = cluster.nodes.find((n) => n.name === m);
      if (node === undefined) throw new Error(`${ctx.step.id}: member ${m} is not a node of the cluster`);
      return nodeMetadataLines({ node: m, labels: node.labels, nodeLocalCriSocket: cluster.nodeLocalCriSocket });
    });
    return { create: renderScript(ctx.node.name, [...claims, ...read, ...lines]) };
  },
  stdin: {
    // Gate off: one endpoint line per member, in member order, each read by its member's lines.
    endpointsOf: ({ cluster, step }) => (cluster.nodeLocalCriSocket ? [] : (step.members ?? [])),
    render: ({ cluster, step }, v) => (cluster.nodeLocalCriSocket ? "" : (step.members ?? []).map((m) => `${v.endpointOf(m)}\n`).join("")),
  },
  triggers: (ctx) => ctx.step.members ?? [],
};
