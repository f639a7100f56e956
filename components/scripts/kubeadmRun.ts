/**
 * What the `init` and `join` kinds share: run kubeadm once on a node, from a configuration that
 * arrives on stdin; their delete, and the cleanup before a retry, run `kubeadm reset` with the node's
 * CRI endpoint.
 */
import { renderScript } from "./script";
import { shellQuote } from "./quote";
import { claimCall } from "./claim";
import type { StepScripts } from "./types";

/** Where the kubeadm configuration files go on a node (dir 0700, files 0600). */
export const CONFIG_DIR = "/etc/kubernetes/pulumi-kubeadm";

/**
 * `kubeadm reset -f --cri-socket <endpoint>`. Without `--cri-socket`, kubeadm reset takes the socket
 * from the cluster only where an admin kubeconfig reaches it, and otherwise detects it, failing with
 * "found multiple CRI endpoints" on a node with two runtimes (containerd and cri-dockerd after a
 * Docker install): the node's own endpoint is always passed.
 */
function resetCommand(criSocket: string): string {
  return `kubeadm reset -f --cri-socket ${shellQuote(criSocket)} >&2`;
}

/** What `kubeadmOnceScripts` needs. */
export interface KubeadmOnceInput {
  node: string;
  action: "init" | "join";
  /** Keep the configuration file after success (init's holds no secret; join's does). */
  keepConfig: boolean;
  /** The node's normalised CRI endpoint (declared, or detected by the prepare step). */
  criSocket: string;
  /** The step id: the scope of the ownership claim (`owners/<scope>`). */
  scope: string;
  /** The resource's logical name, `<cluster>-<step id>`: the owner the claim names. */
  owner: string;
  /** Its names under the Cluster's earlier names (aliases), whose claims an update takes over. */
  formerOwners?: string[];
  /**
   * join: the resource that made the join material (`<cluster>-<node>-join-token`, a worker's `<cluster>-workers_<n>-join-material`). The configuration
   * on stdin then starts with `# pulumi-kubeadm: join material valid until <epoch seconds>`, and a new
   * attempt with material past that time fails, naming that resource to replace, before kubeadm runs.
   */
  materialFrom?: string;
}

/** The first line of a join configuration: until when its material is valid (node clock, epoch seconds). */
export const VALID_UNTIL_PREFIX = "# pulumi-kubeadm: join material valid until ";

/** The line of an init or join configuration that names the version the node is made at. */
export const VERSION_PREFIX = "# pulumi-kubeadm: kubernetesVersion ";

/**
 * The configuration's line naming the version (`v1.34.2`), recorded on the node after success. It
 * travels on stdin, not in the script: a version change leaves the script text as it was, so an upgrade
 * does not update (and dial) a node's init or join, whose stdin changes are ignored once it ran.
 */
export function versionLine(version: string): string {
  if (!/^v\d+\.\d+\.\d+$/.test(version)) throw new Error(`not a kubeadm version: ${JSON.stringify(version)}`);
  return `${VERSION_PREFIX}${version}\n`;
}

function resetScript(i: KubeadmOnceInput): string {
  return renderScript(i.node, [
    // Only the resource that made the node (or the last of those that took it over) resets it: a
    // renamed or replaced resource was claimed by its successor before this delete runs.
    `${claimCall("pk_release", i.scope, i.owner)} || exit 0`,
    `if [ -e /etc/kubernetes/kubelet.conf ] || [ -e /etc/kubernetes/admin.conf ] || [ -d "$PK_STATE_DIR/run/${i.action}" ]; then`,
    `  ${resetCommand(i.criSocket)}`,
    `fi`,
    `rm -rf "$PK_STATE_DIR/run/${i.action}" "$PK_STATE_DIR/version" ${CONFIG_DIR}`,
  ]);
}

/** Why an update of init or join on a node without its record or kubeadm state is refused, and what to do instead. */
function reranMessage(i: KubeadmOnceInput): string {
  const what =
    i.action === "init"
      ? "a second kubeadm init would make a new, separate cluster, and the first control-plane node holds the cluster's certificate authority and first etcd member. Restore that machine (or put back its host); this component cannot move a cluster's first control-plane node to another machine"
      : "a second kubeadm join would register this machine under the old Node's name. To put a new machine under this name: remove the node from nodes and pulumi up (first, for a worker whose old machine is unreachable, set gone: true and pulumi up; a control-plane node's old etcd member must be removed by hand first, etcdctl member remove on another control-plane node), then add it back: it joins as a new node, with fresh join material";
  return `the stack records kubeadm ${i.action} for this node (or keeps it for a node written off with gone: true), but the node has no record of that run (another machine at its host) or no kubeadm state (reset by hand). Nothing was changed: ${what}`;
}

function runScript(i: KubeadmOnceInput, claim: "pk_claim" | "pk_claim_once"): string {
  const file = `${CONFIG_DIR}/kubeadm-${i.action}.yaml`;
  const run = `"$PK_STATE_DIR/run/${i.action}"`;
  const material = i.materialFrom;
  return renderScript(i.node, [
    // An update runs where the create succeeded (a failed create is not recorded; a frozen step of a gone
    // worker aside). A node with no record of the run (every node this package made has one) is another
    // machine at the node's host; one whose run succeeded but which has no kubeadm state was reset by
    // hand (this package's own reset removes the record). A second kubeadm run there would make a
    // separate cluster (init) or register the machine under the old Node's name (join): refused before
    // anything changes.
    ...(claim === "pk_claim_once" ? [`if [ ! -e ${run} ] || { [ -f ${run}/done ] && pk_kubeadm_clean; }; then pk_fail ${shellQuote(reranMessage(i))}; fi`] : []),
    `if [ ! -f ${run}/done ]; then`,
    // A run that failed leaves kubeadm's half-made files, which make the next run fail preflight:
    // reset first, but only when the node had no kubeadm state before this step first ran (never
    // another cluster's node).
    `  if [ -f ${run}/rc ] && [ "$(cat ${run}/rc)" != 0 ] && [ -f ${run}/clean-before ]; then`,
    `    printf 'pulumi-kubeadm: node %s: the last kubeadm ${i.action} failed; kubeadm reset before trying again\n' "$PK_NODE" >&2`,
    `    ${resetCommand(i.criSocket)} || pk_fail "kubeadm reset after the failed ${i.action} failed"`,
    `    rm -f ${run}/rc ${run}/pid`,
    `  elif [ ! -f ${run}/pid ] && pk_kubeadm_clean; then`,
    `    mkdir -p ${run} && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/run" ${run} && touch ${run}/clean-before`,
    `  fi`,
    `  mkdir -p ${CONFIG_DIR} && chmod 0700 ${CONFIG_DIR}`,
    `  tmp=$(mktemp ${CONFIG_DIR}/.kubeadm-${i.action}.XXXXXX)`,
    `  cat >"$tmp"`,
    `  chmod 0600 "$tmp" && sync "$tmp" && mv -f "$tmp" ${file}`,
    ...(material !== undefined
      ? [
          // A new attempt (none running, none finished) with material past its lifetime would fail in
          // kubeadm's discovery or certificate download: say what to do instead.
          `  valid=$(sed -n ${shellQuote(`1s/^${VALID_UNTIL_PREFIX}\\([0-9]*\\).*$/\\1/p`)} ${file})`,
          `  if [ -n "$valid" ] && { [ ! -f ${run}/pid ] || [ -f ${run}/rc ]; } && [ "$(date +%s)" -ge "$valid" ]; then`,
          `    pk_fail "the join material expired at $(date -u -d "@$valid" +%Y-%m-%dT%H:%M:%SZ) (the join failed before and is retried later than the token or certificate key lives); make new material and retry: pulumi up --replace <the URN of ${material.replace(/["$`\\]/g, "")}> (pulumi stack --show-urns lists it)"`,
          `  fi`,
        ]
      : []),
    `fi`,
    `pk_run_once ${i.action} kubeadm ${i.action} --config ${file}`,
    // What the node runs now, for the rollout's "already at the target" (the upgrade step), from the
    // configuration's version line (a configuration without one records nothing: pk_node_version then
    // asks the cluster).
    `made=$(sed -n ${shellQuote(`s/^${VERSION_PREFIX}\\(v[0-9.]*\\)$/\\1/p`)} ${file} 2>/dev/null | head -n 1 || true)`,
    `if [ ! -f "$PK_STATE_DIR/version" ] && [ -n "$made" ]; then pk_record_version "$made"; fi`,
    ...(i.keepConfig ? [] : [`rm -f ${file}`]),
    claimCall(claim, i.scope, i.owner, claim === "pk_claim_once" ? i.formerOwners : []),
  ]);
}

/**
 * The scripts of a kubeadm run that happens once on a node (init, join):
 * - create: kubeadm once (detached, so a lost connection does not kill it; a retry after a failure
 *   resets first where the node was clean before), the version recorded, then a claim naming this
 *   resource (`pk_claim`); a create that finds the node already made (a replacement, a renamed
 *   resource) only adds its claim;
 * - update: the same, but the claim only if this resource holds none yet;
 * - delete: `kubeadm reset -f --cri-socket <criSocket>` where kubeadm ran, and only when this resource
 *   drops the last claim on the node (so a rename or `pulumi up --replace`, whose new resource claimed
 *   the node first, never resets it).
 */
export function kubeadmOnceScripts(i: KubeadmOnceInput): StepScripts {
  return { create: runScript(i, "pk_claim"), update: runScript(i, "pk_claim_once"), delete: resetScript(i) };
}
