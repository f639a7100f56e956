/**
 * Step kinds `cluster-config-read` and `cluster-config`: the featureGates edit of the kubeadm-config ConfigMap,
 * with kubectl on the first control-plane node (DESIGN.md). The transform runs in TypeScript on what
 * the read step printed; the write step replaces the ConfigMap with the resourceVersion it was read at
 * (optimistic concurrency: the API server refuses a stale one) and does nothing when the ConfigMap
 * already holds the wanted ClusterConfiguration.
 *
 * Both are `idleOnJoin`: on a new cluster (the first control-plane node's prepare reported `joined=no`)
 * `kubeadm init` wrote the ClusterConfiguration with the stack's featureGates (kubeadmConfig.ts), so
 * there is nothing to read or replace and neither opens an SSH session; a later toggle or upgrade changes
 * their inputs and their update runs the script.
 */
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { KUBECTL } from "../scripts/kubectl";
import { sha256Hex } from "../scripts/files";
import type { StepScripts } from "../scripts/types";
import { setFeatureGate } from "../kubeadm/clusterConfig";
import { NODE_LOCAL_CRI_SOCKET } from "../kubeadm/gates";
import type { StepContext, StepKind } from "./kind";
import { stepId } from "./ids";

const GET = `${KUBECTL} get configmap -n kube-system kubeadm-config`;

/**
 * Print the kubeadm-config ConfigMap as JSON. `wanted` (plain words of the target version, the gate and
 * a digest of the write step's script) is part of the command text only so that the read runs again
 * whenever they change: the write step never runs again on a read older than its own script.
 */
export function clusterConfigReadScripts(node: string, wanted: string): StepScripts {
  const create = renderScript(node, [`: wanted ${shellQuote(wanted)}`, `${GET} -o json`]);
  return { create, update: create };
}

/** The ConfigMap as read: its ClusterConfiguration text and the object to write back. */
export interface KubeadmConfigMap {
  clusterConfiguration: string;
  resourceVersion: string;
  object: Record<string, unknown>;
}

/**
 * Read what `clusterConfigReadScripts` printed.
 * @throws Error when it is not the kubeadm-config ConfigMap with a ClusterConfiguration.
 */
export function parseKubeadmConfigMap(stdout: string): KubeadmConfigMap {
  const object = JSON.parse(stdout) as { metadata?: { resourceVersion?: string }; data?: Record<string, string> };
  const clusterConfiguration = object.data?.ClusterConfiguration;
  const resourceVersion = object.metadata?.resourceVersion;
  if (typeof clusterConfiguration !== "string" || typeof resourceVersion !== "string") {
    throw new Error("kubeadm-config: the ConfigMap read has no data.ClusterConfiguration or resourceVersion");
  }
  return { clusterConfiguration, resourceVersion, object: object as Record<string, unknown> };
}

/**
 * stdin of the write step: `original <sha256>`, `desired <sha256>`, `manifest <base64 JSON>` (the
 * ConfigMap as read, metadata (labels, annotations) and other data keys kept, with the desired
 * ClusterConfiguration and the resourceVersion it was read at).
 */
export function encodeClusterConfigChange(read: KubeadmConfigMap, desired: string): string {
  const { metadata, data } = read.object as { metadata: Record<string, unknown>; data: Record<string, string> };
  // The object as read, with only ClusterConfiguration changed: its labels, annotations and every other
  // data key stay (a replace writes the whole object). managedFields are the server's to keep.
  const { managedFields: _managed, ...kept } = metadata;
  void _managed;
  const manifest = {
    ...read.object,
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { ...kept, resourceVersion: read.resourceVersion },
    data: { ...data, ClusterConfiguration: desired },
  };
  return [
    `original ${sha256Hex(read.clusterConfiguration)}`,
    `desired ${sha256Hex(desired)}`,
    `manifest ${Buffer.from(JSON.stringify(manifest), "utf8").toString("base64")}`,
    "",
  ].join("\n");
}

/**
 * Replace kubeadm-config when its ClusterConfiguration is still what was read and is not yet what is
 * wanted; nothing when it already is; refuse (naming the ConfigMap) when it changed in between, saying
 * to replace `readStep` (the read step's resource name): a plain `pulumi up` runs this step again on the
 * same recorded read (the read step's inputs did not change), which would refuse again.
 */
export function clusterConfigScripts(node: string, readStep: string): StepScripts {
  const again = `run pulumi up --replace <URN of ${readStep}>, which reads it anew (a plain pulumi up writes from the same read again)`;
  const create = renderScript(node, [
    `original=""; desired=""; manifest=""`,
    `while read -r key value; do`,
    `  case $key in original) original=$value ;; desired) desired=$value ;; manifest) manifest=$value ;; esac`,
    `done`,
    // Nothing read (the read step ran no command: the cluster was made in that run, by kubeadm init with
    // the stack's featureGates): nothing to write, whatever made this step run again.
    `if [ -z "$original$desired$manifest" ]; then echo "kubeadm-config: nothing read (kubeadm init wrote it as asked), nothing to write"; exit 0; fi`,
    `[ -n "$original" ] && [ -n "$desired" ] && [ -n "$manifest" ] || pk_fail "cluster-config: incomplete input"`,
    `current=$(${GET} -o jsonpath='{.data.ClusterConfiguration}' | sha256sum | cut -d' ' -f1)`,
    `if [ "$current" = "$desired" ]; then echo "kubeadm-config: already as wanted"; exit 0; fi`,
    `[ "$current" = "$original" ] || pk_fail ${shellQuote(`kubeadm-config changed since it was read; ${again}`)}`,
    `printf '%s' "$manifest" | base64 -d | ${KUBECTL} replace -f - >&2 || pk_fail ${shellQuote(`kubeadm-config: kubectl replace failed (a conflict means it changed since it was read: ${again})`)}`,
    `echo "kubeadm-config: replaced"`,
  ]);
  return { create, update: create };
}

/** The `cluster-config` step's scripts on its node (its refusals name that node's read step). */
function writeScripts({ node, resourceName }: StepContext): StepScripts {
  return clusterConfigScripts(node.name, resourceName(stepId(node.name, "cluster-config-read")));
}

/**
 * `cluster-config-read`: the kubeadm-config ConfigMap as it is now (data for `cluster-config`). Runs again
 * when the target version, the gate or the `cluster-config` step's script changes.
 */
export const clusterConfigRead: StepKind = {
  action: "cluster-config-read",
  shows: ["kubernetesVersion", "NodeLocalCRISocket"],
  summary: () => "read the kubeadm-config ConfigMap (ClusterConfiguration, resourceVersion)",
  // The write step's script in the words too: a change of it alone (a new version of this package) runs
  // the write step again, which must compare against the ConfigMap as it is now (`kubeadm upgrade apply`
  // rewrites it), not against the read recorded before the last upgrade (it would refuse).
  scripts: (ctx) =>
    clusterConfigReadScripts(
      ctx.node.name,
      `${ctx.cluster.version.text} NodeLocalCRISocket=${ctx.cluster.kubeadmFeatureGates.NodeLocalCRISocket ?? "default"} write=${sha256Hex(writeScripts(ctx).create).slice(0, 16)}`,
    ),
  dataOutput: true,
  idleOnJoin: true,
};

/** `cluster-config`: featureGates.NodeLocalCRISocket in kubeadm-config as the stack says. */
export const clusterConfig: StepKind = {
  action: "cluster-config",
  summary: ({ cluster }) => {
    const gate = cluster.kubeadmFeatureGates.NodeLocalCRISocket;
    return gate === undefined
      ? "kubeadm-config: no featureGates.NodeLocalCRISocket entry (the version's default applies); replace only if it must change"
      : `kubeadm-config: featureGates.NodeLocalCRISocket=${gate}; replace only if it must change (optimistic concurrency)`;
  },
  scripts: writeScripts,
  stdin: {
    reads: ({ node }) => [stepId(node.name, "cluster-config-read")],
    // Nothing read: the read step ran no command (a new cluster, `idleOnJoin`), and neither does this one.
    render: ({ cluster, node }, v) => {
      const read = v.stdout(stepId(node.name, "cluster-config-read"));
      if (read === "") return "";
      const cm = parseKubeadmConfigMap(read);
      const desired = setFeatureGate(cm.clusterConfiguration, NODE_LOCAL_CRI_SOCKET, cluster.kubeadmFeatureGates[NODE_LOCAL_CRI_SOCKET]);
      return encodeClusterConfigChange(cm, desired);
    },
  },
  idleOnJoin: true,
};
