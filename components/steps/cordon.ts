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
 * Shell lines (after {@link CORDON_PRELUDE}) that uncordon each of `members`, in order, that carries the
 * mark: one read of the Node (`{.spec.unschedulable}|<mark>`), `kubectl uncordon` when unschedulable, the
 * mark removed; stdout `<node>: uncordoned`, or `<node>: not cordoned by this component` (nothing written).
 * Fails (pk_fail, naming the member) when its Node cannot be read. Reads nothing from stdin.
 */
export function uncordonLines(members: string[]): string[] {
  return [
    `for m in ${members.map(shellQuote).join(" ")}; do`,
    `  seen=$(kc get node "$m" -o jsonpath="{.spec.unschedulable}|$mark" </dev/null) || { PK_NODE=$m; pk_fail "cannot read the Node"; }`,
    `  IFS='|' read -r unschedulable cordoned <<<"$seen" || true`,
    `  if [ -z "$cordoned" ]; then echo "$m: not cordoned by this component"; continue; fi`,
    `  if [ "$unschedulable" = true ]; then kc uncordon "$m" >&2 </dev/null; fi`,
    `  kc annotate --overwrite node "$m" ${shellQuote(`${CORDONED_ANNOTATION}-`)} >&2 </dev/null`,
    `  echo "$m: uncordoned"`,
    `done`,
  ];
}
