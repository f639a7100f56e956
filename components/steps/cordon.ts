/**
 * The cordon mark (KEP-independent, this component's own): a Node this component cordons for a rollout
 * carries the annotation `kubeadm.pulumi.com/cordoned` until this component uncordons it, so that it
 * uncordons only what it cordoned, never a Node an operator cordoned (kubectl drain cordons first;
 * kubectl uncordon clears `.spec.unschedulable` whoever set it). The shell lines here run on the first
 * control-plane node, with kubeadm's admin kubeconfig.
 */
import { shellQuote } from "../scripts/quote";

export { CORDONED_ANNOTATION } from "../scripts/kubectl";

/**
 * Shell lines that uncordon each of `members` that carries the mark and remove it (lib.sh's
 * pk_uncordon_marked, which takes the mark's annotation and jsonpath from the library's values): the members read in ONE kubectl call, then one `kubectl
 * uncordon`, one read again (kubectl uncordon exits 0 when a patch fails) and one `kubectl annotate` for all
 * those marked, whatever their number (they were up to three calls per member); the mark never leaves a
 * Node that is still cordoned. A member the read missed, one still cordoned, or of a refused annotate, is
 * done on its own, one after another. Then, in `members` order, on stdout `<node>: uncordoned`, or
 * `<node>: not cordoned by this component` (nothing written), none for a member that failed; kubectl's
 * output on stderr. Fails (pk_fail, naming the first such member in order) once every member is done,
 * when a member's Node cannot be read (`cannot read the Node`) or kubectl could not uncordon it. Reads
 * nothing from stdin and writes no file.
 */
export function uncordonLines(members: string[]): string[] {
  return [`pk_uncordon_marked ${members.map(shellQuote).join(" ")}`];
}
