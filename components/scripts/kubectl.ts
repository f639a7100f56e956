/**
 * kubectl as the node scripts run it on the first control-plane node: with the admin kubeconfig
 * kubeadm wrote there (DESIGN.md: cluster-side edits run there, in step order).
 */

/** Where kubeadm writes the admin kubeconfig on a control-plane node. */
export const ADMIN_KUBECONFIG = "/etc/kubernetes/admin.conf";

/** kubeadm's legacy per-node CRI socket annotation (KEP-4656 removes it). */
export const CRI_SOCKET_ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket";

/** Where the node-metadata step records which label keys it manages (comma-separated), so it can remove dropped ones. */
export const MANAGED_LABELS_ANNOTATION = "kubeadm.pulumi.com/labels";

/** The annotation that says this component cordoned the Node (its value: why); steps/cordon.ts says how it is used. */
export const CORDONED_ANNOTATION = "kubeadm.pulumi.com/cordoned";

/** `kubectl` with kubeadm's admin kubeconfig. */
export const KUBECTL = `kubectl --kubeconfig ${ADMIN_KUBECONFIG}`;

/**
 * The kubectl jsonpath of one annotation of an object: `{.metadata.annotations.<key>}`, the dots of the
 * key escaped (`kubeadm\.pulumi\.com/cordoned`), as kubectl's jsonpath needs them. Not shell-quoted.
 */
export function annotationJsonpath(key: string): string {
  return `{.metadata.annotations.${key.replace(/\./g, "\\.")}}`;
}

/**
 * The flags of `kubectl drain`: DaemonSet pods ignored, emptyDir data deleted, `--timeout` in seconds,
 * `--grace-period` when given (else each pod's own). Words without spaces, space-separated.
 */
export function drainFlags(timeoutSeconds: number, gracePeriodSeconds?: number): string {
  const grace = gracePeriodSeconds !== undefined ? ` --grace-period=${gracePeriodSeconds}` : "";
  return `--ignore-daemonsets --delete-emptydir-data --timeout=${timeoutSeconds}s${grace}`;
}

/**
 * The `kubectl drain` command for a node (it cordons first), with {@link drainFlags}.
 * @param node the node as ONE shell word: a shellQuote'd name, or a quoted variable (`"$m"`).
 */
export function drainCommand(node: string, timeoutSeconds: number, gracePeriodSeconds?: number): string {
  return `${KUBECTL} drain ${node} ${drainFlags(timeoutSeconds, gracePeriodSeconds)}`;
}
