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
export function claimCall(fn: "pk_claim" | "pk_claim_once", scope: string, owner: string, formerOwners: readonly string[] = []): string {
  return [fn, ...[scope, owner, ...formerOwners].map(shellQuote)].join(" ");
}

/**
 * A destructive delete's lines around its `work`: `pk_release 'scope' 'owner' || exit 0` first (nothing
 * done unless `owner` holds the last claim), then the work, then `pk_release_done 'scope'`, which drops
 * that claim only once the work succeeded (a delete that fails midway keeps it, and its retry acts).
 */
export function releasingDelete(scope: string, owner: string, work: readonly string[]): string[] {
  return [`pk_release ${shellQuote(scope)} ${shellQuote(owner)} || exit 0`, ...work, `pk_release_done ${shellQuote(scope)}`];
}
