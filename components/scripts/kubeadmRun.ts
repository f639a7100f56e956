/**
 * What the `init` and `join` kinds share: run kubeadm once on a node, from a configuration that
 * arrives on stdin; their delete, and the cleanup before a retry, run `kubeadm reset` with the node's
 * CRI endpoint.
 */
import { renderScript } from "./script";
import { shellQuote } from "./quote";
import { claimCall, releasingDelete } from "./claim";
import type { StepScripts } from "./types";

/** Where the kubeadm configuration files go on a node (dir 0700, files 0600): lib.sh's `pk_kubeadm_once` and `pk_kubeadm_reset` name it (a unit test checks). */
export const CONFIG_DIR = "/etc/kubernetes/pulumi-kubeadm";

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

/** The first line of a join configuration: until when its material is valid (node clock, epoch seconds); `pk_kubeadm_once` reads it back (a unit test checks it names this text). */
export const VALID_UNTIL_PREFIX = "# pulumi-kubeadm: join material valid until ";

/** The line of an init or join configuration that names the version the node is made at; `pk_kubeadm_once` reads it back (a unit test checks it names this text). */
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

/**
 * The delete: lib.sh's `pk_kubeadm_reset`, `kubeadm reset -f --cri-socket <endpoint>` where kubeadm ran.
 * Without `--cri-socket`, kubeadm reset takes the socket from the cluster only where an admin kubeconfig
 * reaches it, and otherwise detects it, failing with "found multiple CRI endpoints" on a node with two
 * runtimes (containerd and cri-dockerd after a Docker install): the node's own endpoint is always passed.
 * Only the resource that made the node (or the last of those that took it over) resets it: a renamed or
 * replaced resource was claimed by its successor before this delete runs.
 */
function resetScript(i: KubeadmOnceInput): string {
  return renderScript(i.node, releasingDelete(i.scope, i.owner, [`pk_kubeadm_reset ${i.action} ${shellQuote(i.criSocket)}`]));
}

/**
 * The create (`pk_claim`) or update (`pk_claim_once`): lib.sh's `pk_kubeadm_once`, then the claim. An
 * update runs where the create succeeded (a failed create is not recorded; a frozen step of a gone worker
 * aside). A node with no record of the run (every node this package made has one) is another machine at
 * the node's host; one whose run succeeded but which has no kubeadm state was reset by hand (this
 * package's own reset removes the record). A second kubeadm run there would make a separate cluster
 * (init) or register the machine under the old Node's name (join): the update refuses it before anything
 * changes (`pk_kubeadm_rerun_refused` says why and what to do). A run that failed leaves kubeadm's
 * half-made files, which make the next run fail preflight: reset first, but only when the node had no
 * kubeadm state before this step first ran (never another cluster's node). A new attempt (none running,
 * none finished) with join material past its lifetime would fail in kubeadm's discovery or certificate
 * download: it fails first, naming the resource to replace. What the node runs now is recorded for the
 * rollout's "already at the target" (the upgrade step), from the configuration's version line (a
 * configuration without one records nothing: pk_node_version then asks the cluster).
 */
function runScript(i: KubeadmOnceInput, claim: "pk_claim" | "pk_claim_once"): string {
  const args = [i.action, shellQuote(i.criSocket), i.keepConfig ? "yes" : "no", shellQuote(i.materialFrom ?? ""), claim === "pk_claim_once" ? "yes" : "no"];
  return renderScript(i.node, [`pk_kubeadm_once ${args.join(" ")}`, claimCall(claim, i.scope, i.owner, claim === "pk_claim_once" ? i.formerOwners : [])]);
}

/**
 * The scripts of a kubeadm run that happens once on a node (init, join):
 * - create: kubeadm once (detached, so a lost connection does not kill it; a retry after a failure
 *   resets first where the node was clean before), the version recorded, then a claim naming this
 *   resource (`pk_claim`); a create that finds the node already made (a replacement, a renamed
 *   resource) only adds its claim;
 * - update: the same, but the claim only if this resource holds none yet;
 * - delete: `kubeadm reset -f --cri-socket <criSocket>` where kubeadm ran, and only when this resource
 *   holds the last claim on the node (so a rename or `pulumi up --replace`, whose new resource claimed
 *   the node first, never resets it), which it drops once the reset succeeded (a failed reset is tried
 *   again by the retried delete).
 */
export function kubeadmOnceScripts(i: KubeadmOnceInput): StepScripts {
  return { create: runScript(i, "pk_claim"), update: runScript(i, "pk_claim_once"), delete: resetScript(i) };
}
