/**
 * The first control-plane node's list of the cluster's nodes, as the last `up` whose every step
 * succeeded asked (written by the component's members record, records.ts). The destructive deletes that
 * run there (a node's drain, its Node deleted) read it to tell a node's removal from the replacement of
 * one of its steps: a step's create may run no command (`idleOnJoin`: its join wave did its work and wrote
 * its ownership claim), so a `pulumi up --replace` of it claims nothing and its old delete holds the last
 * claim; the node is still in this list then, and nothing is done.
 */
import { shellQuote } from "./quote";
import { renderScript } from "./script";

/** Where the list is kept on the first control-plane node (`$PK_STATE_DIR/members`, /var/lib/pulumi-kubeadm): one node name a line; shell text. lib.sh's `pk_exit_if_still_wanted` reads it there (a unit test checks). */
export const MEMBERS_FILE = `"$PK_STATE_DIR/members"`;

/**
 * The line a destructive delete runs after `pk_release SCOPE OWNER` let it act (OWNER holds the last
 * claim): lib.sh's `pk_exit_if_still_wanted`, which, when `node` is still in the list, says why and exits
 * 0 (nothing done, the claim kept); otherwise (removed, or no list: a cluster whose members record
 * predates the list) the script goes on.
 */
export function stillWantedLines(node: string): string[] {
  return [`pk_exit_if_still_wanted ${shellQuote(node)}`];
}

/**
 * The members record's scripts, on the first control-plane node `first`: create/update write the list
 * (`nodes`, atomically, after a first line naming the record `owner`), delete (the whole cluster
 * destroyed: the record goes first, it depends on every step) removes it, so the deletes that follow act
 * as before; but only a list this record wrote (a cluster renamed without an alias: the new record
 * writes its list before the old one's delete runs, which then leaves it).
 */
export function membersFileScripts(first: string, owner: string, nodes: string[]): { create: string; delete: string } {
  const head = `# written by ${owner}`;
  const list = [head, ...nodes].map((n) => `${n}\n`).join("");
  return {
    create: renderScript(first, [
      `mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"`,
      `tmp=$(mktemp "$PK_STATE_DIR/members.XXXXXX")`,
      `printf '%s' ${shellQuote(list)} >"$tmp"`,
      `sync "$tmp" && mv -f "$tmp" ${MEMBERS_FILE}`,
    ]),
    delete: renderScript(first, [`if [ "$(head -n 1 ${MEMBERS_FILE} 2>/dev/null)" = ${shellQuote(head)} ]; then rm -f ${MEMBERS_FILE}; fi`]),
  };
}
