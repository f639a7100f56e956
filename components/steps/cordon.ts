/**
 * The cordon mark (KEP-independent, this component's own): a Node this component cordons for a rollout
 * carries the annotation `kubeadm.pulumi.com/cordoned` until this component uncordons it, so that it
 * uncordons only what it cordoned, never a Node an operator cordoned (kubectl drain cordons first;
 * kubectl uncordon clears `.spec.unschedulable` whoever set it). The shell lines here run on the first
 * control-plane node, with kubeadm's admin kubeconfig.
 */
import { shellQuote } from "../scripts/quote";
import { KUBECTL, annotationJsonpath } from "../scripts/kubectl";

/** The annotation that says this component cordoned the Node (its value: why). */
export const CORDONED_ANNOTATION = "kubeadm.pulumi.com/cordoned";

/**
 * The prelude of a script that reads or clears the mark: `kc` (kubectl with the admin kubeconfig) and
 * `$mark` (the mark's jsonpath, for `-o jsonpath=`).
 */
export const CORDON_PRELUDE: readonly string[] = [`kc() { ${KUBECTL} "$@"; }`, `mark=${shellQuote(annotationJsonpath(CORDONED_ANNOTATION))}`];

/**
 * Shell lines (after {@link CORDON_PRELUDE}) that uncordon each of `members` that carries the mark, the
 * members side by side (as a batch's drains run): one read of the Node (`{.spec.unschedulable}|<mark>`),
 * `kubectl uncordon` when unschedulable, the mark removed; then, in `members` order, each one's kubectl
 * output on stderr and on stdout `<node>: uncordoned`, or `<node>: not cordoned by this component`
 * (nothing written). Fails (pk_fail, naming the first such member in order) once every member is done,
 * when a member's Node cannot be read (`cannot read the Node`) or kubectl could not uncordon it. Reads
 * nothing from stdin; its temporary folder is gone when it ends.
 */
export function uncordonLines(members: string[]): string[] {
  return [
    `uncordon_one() {`,
    `  local seen unschedulable cordoned`,
    `  seen=$(kc get node "$1" -o jsonpath="{.spec.unschedulable}|$mark" </dev/null) || return 3`,
    `  IFS='|' read -r unschedulable cordoned <<<"$seen" || true`,
    `  if [ -z "$cordoned" ]; then echo "$1: not cordoned by this component"; return 0; fi`,
    `  if [ "$unschedulable" = true ]; then kc uncordon "$1" >&2 </dev/null || return 4; fi`,
    `  kc annotate --overwrite node "$1" ${shellQuote(`${CORDONED_ANNOTATION}-`)} >&2 </dev/null || return 4`,
    `  echo "$1: uncordoned"`,
    `}`,
    `uc=$(mktemp -d); trap 'rm -rf "$uc"' EXIT`,
    `for m in ${members.map(shellQuote).join(" ")}; do`,
    // `|| rc=$?`: under set -e a failed call would end the background job before its status is written.
    `  { rc=0; uncordon_one "$m" >"$uc/$m.out" 2>"$uc/$m.err" || rc=$?; echo "$rc" >"$uc/$m.rc"; } &`,
    `done`,
    `wait`,
    `failed=""`,
    `for m in ${members.map(shellQuote).join(" ")}; do`,
    `  cat "$uc/$m.err" >&2; cat "$uc/$m.out"`,
    `  rc=$(cat "$uc/$m.rc"); [ "$rc" = 0 ] || [ -n "$failed" ] || failed="$m $rc"`,
    `done`,
    `rm -rf "$uc"; trap - EXIT`,
    `if [ -n "$failed" ]; then PK_NODE=\${failed% *}; if [ "\${failed##* }" = 3 ]; then pk_fail "cannot read the Node"; else pk_fail "could not uncordon the node"; fi; fi`,
  ];
}
