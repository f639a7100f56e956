/**
 * The ownership claim calls of the shell library (lib.sh): `pk_claim SCOPE OWNER` (create),
 * `pk_claim_once SCOPE OWNER [FORMER...]` (update: claims only when OWNER holds none, taking over the
 * claims of its former names, the Cluster's aliases), `pk_release SCOPE OWNER` (delete: drops OWNER's
 * claim; fails when other claims remain). A destructive delete acts only when it drops the last claim on
 * the node, so a rename or a replacement never resets, drains or deletes a live node.
 */
import { shellQuote } from "./quote";

/** One claim call, every argument quoted: `pk_claim_once 'scope' 'owner' 'former'`. */
export function claimCall(fn: "pk_claim" | "pk_claim_once" | "pk_release", scope: string, owner: string, formerOwners: readonly string[] = []): string {
  return [fn, ...[scope, owner, ...formerOwners].map(shellQuote)].join(" ");
}
