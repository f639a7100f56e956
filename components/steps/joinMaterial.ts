/**
 * Step kind `join-material`, on the first control-plane node, one step per join wave of workers (the
 * workers in plan order, `maxConcurrentJoins` at a time): ONE bootstrap token for every member of the
 * wave (no certificate key: workers only), printed as a `join-token` step prints it, so each member's
 * `join` reads it on its secret stdin. Its stdout is secret (secret outputs, nothing logged).
 *
 * It also writes, for each member, the ownership claim of the member's own `join-token` step (whose
 * create runs no command on a node that joins in this run, `idleOnJoin`), so that step's delete (the Node
 * deleted when the node leaves the stack) finds its claim.
 *
 * No delete; its `triggers` are its members: a worker added to or removed from the wave replaces it (its
 * create runs again: a new token, the new members' claims), which is safe since it has no delete. Its
 * inputs hold neither the version nor the labels, so an upgrade or a label change does not run it. A
 * join retried after the material's lifetime names this resource to replace (`pulumi up --replace`).
 */
import { renderScript } from "../scripts/script";
import type { StepScripts } from "../scripts/types";
import type { StepContext, StepKind } from "./kind";
import { joinMaterialLines } from "./joinToken";
import { claimCall } from "../scripts/claim";
import { stepId } from "./ids";
import { membersWords } from "./words";

/** One ownership claim a wave step writes for a member's own step (`pk_claim_once`). */
export interface MemberClaim {
  /** The member's step id: the scope of the claim. */
  scope: string;
  /** The member step's resource name: the owner. */
  owner: string;
  /** Its names under the Cluster's earlier names (aliases), whose claims become `owner`'s. */
  formerOwners: string[];
}

/** The `pk_claim_once` line of a member's claim. */
export function memberClaimLine(c: MemberClaim): string {
  return claimCall("pk_claim_once", c.scope, c.owner, c.formerOwners);
}

/** The claims of the members' `action` steps (`<member>-<action>`), as a wave step writes them. */
export function memberClaims(ctx: StepContext, action: string): MemberClaim[] {
  return (ctx.step.members ?? []).map((m) => {
    const scope = stepId(m, action);
    return { scope, owner: ctx.resourceName(scope), formerOwners: ctx.formerResourceNames(scope) };
  });
}

/**
 * The wave's material: `joinMaterialLines` for a worker (token, CA hash, endpoint, `validUntil`), then a
 * `pk_claim_once` per member claim. Create only (no update: any change of its inputs runs the create
 * again, as pulumi-command does; no delete).
 * @param runsOn the first control-plane node (its name in messages).
 * @throws Error when tokenTtl is not a positive kubeadm duration.
 */
export function joinMaterialScripts(runsOn: string, tokenTtl: string, claims: MemberClaim[]): StepScripts {
  return { create: renderScript(runsOn, [...joinMaterialLines(tokenTtl, false), ...claims.map(memberClaimLine)]) };
}

/** `join-material`: one bootstrap token for a join wave of workers, made on the first control-plane node. */
export const joinMaterial: StepKind = {
  action: "join-material",
  summary: ({ members }) =>
    `make fresh join material for the join wave of ${membersWords(members ?? [])}: ONE bootstrap token and the CA certificate hash (secret), and each member's join-token claim; a change of the wave's members makes it anew`,
  scripts: (ctx) => joinMaterialScripts(ctx.node.name, ctx.settings.joinTokenTtl, memberClaims(ctx, "join-token")),
  secretOutput: true,
  triggers: (ctx) => ctx.step.members ?? [],
};
