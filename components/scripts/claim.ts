/**
 * The ownership claim calls of the shell library (lib.sh): `pk_claim SCOPE OWNER` (create),
 * `pk_claim_once SCOPE OWNER [FORMER...]` (update: claims only when OWNER holds none, taking over the
 * claims of its former names, the Cluster's aliases), `pk_release SCOPE OWNER` (delete: true only when
 * OWNER holds the last claim; else drops OWNER's claim and fails), then `pk_release_done SCOPE` (the
 * last claim dropped once the delete's work is done). A destructive delete acts only where it holds the
 * last claim on the node, so a rename or a replacement never resets, drains or deletes a live node, and
 * keeps that claim until its work is done, so a delete that failed midway acts again when retried.
 */
import { shellQuote } from "./quote";

/** One claim call, every argument quoted: `pk_claim_once 'scope' 'owner' 'former'`. */
export function claimCall(fn: "pk_claim" | "pk_claim_once" | "pk_release", scope: string, owner: string, formerOwners: readonly string[] = []): string {
  return [fn, ...[scope, owner, ...formerOwners].map(shellQuote)].join(" ");
}

/**
 * The last line of a destructive delete, after its work: `pk_release_done 'scope'` drops the last claim
 * that `pk_release` let it act on (a delete that fails before this line keeps the claim, and its retry acts).
 */
export function releaseDoneCall(scope: string): string {
  return `pk_release_done ${shellQuote(scope)}`;
}
