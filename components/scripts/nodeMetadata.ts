/**
 * `node-metadata`: cluster-side edits of one Node, with kubectl on the first control-plane node
 * (DESIGN.md: cluster-side edits run there, in step order): labels, and the
 * `kubeadm.alpha.kubernetes.io/cri-socket` annotation removed (gate in effect) or set (legacy) to the
 * node's endpoint, which arrives on stdin (it may have been detected on the node).
 */
import { renderScript } from "./script";
import { shellQuote } from "./quote";
import type { StepScripts } from "./types";

/** kubeadm's legacy per-node CRI socket annotation (KEP-4656 removes it). */
export const CRI_SOCKET_ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket";

/** Where the step records which label keys it manages (comma-separated), so it can remove dropped ones. */
export const MANAGED_LABELS_ANNOTATION = "kubeadm.pulumi.com/labels";

const jsonPathOfAnnotation = (key: string) => shellQuote(`{.metadata.annotations.${key.replace(/\./g, "\\.")}}`);

/** What the node-metadata step needs. */
export interface NodeMetadataInput {
  node: string;
  labels: Record<string, string>;
  /** true: remove the annotation; false: set it to the endpoint read from stdin (one line). */
  nodeLocalCriSocket: boolean;
  /** Uncordon the node (a worker, which the drain step may have cordoned). */
  uncordon: boolean;
  /** The target version: part of the text so the step runs again (and uncordons) after every rollout. */
  version: string;
  /** kubectl drain timeout for the delete, in seconds. */
  drainTimeoutSeconds: number;
}

const KUBECTL = "kubectl --kubeconfig /etc/kubernetes/admin.conf";

/**
 * Create/update: uncordon (workers, when cordoned), remove the labels it set before that are no longer
 * wanted (recorded in the `kubeadm.pulumi.com/labels` annotation), set the wanted ones (`--overwrite`),
 * then remove or set the cri-socket annotation. Delete (the node
 * leaves the cluster): drain it and delete the Node object, skipped when the cluster is gone.
 */
export function nodeMetadataScripts(input: NodeMetadataInput): StepScripts {
  const node = shellQuote(input.node);
  const labels = Object.entries(input.labels).map(([k, v]) => shellQuote(`${k}=${v}`));
  const jsonPath = jsonPathOfAnnotation(CRI_SOCKET_ANNOTATION);
  const managed = Object.keys(input.labels).sort().join(",");
  const annotation = input.nodeLocalCriSocket
    ? [
        `current=$(${KUBECTL} get node ${node} -o jsonpath=${jsonPath})`,
        `if [ -n "$current" ]; then ${KUBECTL} annotate node ${node} ${shellQuote(`${CRI_SOCKET_ANNOTATION}-`)} >&2; fi`,
      ]
    : [
        `IFS= read -r endpoint || true`,
        `[[ $endpoint =~ ^unix:///[A-Za-z0-9._/@+-]+$ ]] || pk_fail "no usable CRI endpoint on stdin for the annotation"`,
        `${KUBECTL} annotate --overwrite node ${node} ${shellQuote(`${CRI_SOCKET_ANNOTATION}=`)}"$endpoint" >&2`,
      ];
  const create = renderScript(input.node, [
    `: rollout ${shellQuote(input.version)}`,
    `${KUBECTL} get node ${node} >/dev/null || pk_fail "the Node object is not registered"`,
    ...(input.uncordon ? [`if [ "$(${KUBECTL} get node ${node} -o jsonpath='{.spec.unschedulable}')" = true ]; then ${KUBECTL} uncordon ${node} >&2; fi`] : []),
    `previous=$(${KUBECTL} get node ${node} -o jsonpath=${jsonPathOfAnnotation(MANAGED_LABELS_ANNOTATION)})`,
    `wanted=${shellQuote(`,${managed},`)}`,
    `IFS=, read -r -a keys <<<"$previous"`,
    `for key in \${keys[@]+"\${keys[@]}"}; do`,
    `  if [ -n "$key" ] && [[ $wanted != *",$key,"* ]]; then ${KUBECTL} label node ${node} "$key-" >&2; fi`,
    `done`,
    ...(labels.length > 0 ? [`${KUBECTL} label --overwrite node ${node} ${labels.join(" ")} >&2`] : []),
    `if [ "$previous" != ${shellQuote(managed)} ]; then ${KUBECTL} annotate --overwrite node ${node} ${shellQuote(`${MANAGED_LABELS_ANNOTATION}=${managed}`)} >&2; fi`,
    ...annotation,
  ]);
  const del = renderScript(input.node, [
    `[ -f /etc/kubernetes/admin.conf ] || exit 0`,
    `if ${KUBECTL} get node ${node} >/dev/null 2>&1; then`,
    `  ${KUBECTL} drain ${node} --ignore-daemonsets --delete-emptydir-data --timeout=${input.drainTimeoutSeconds}s >&2 || pk_fail "drain failed; the node stays cordoned"`,
    `  ${KUBECTL} delete node ${node} >&2`,
    `fi`,
  ]);
  return { create, update: create, delete: del };
}
