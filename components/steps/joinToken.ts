/**
 * Step kind `join-token`, on the first control-plane node for each node that joins: fresh join
 * material (bootstrap token, CA hash, and for a control-plane node a certificate key), made when the
 * step is created, right before its node's join. Its stdout is secret (secret outputs, nothing logged);
 * the `join` step reads it on a secret stdin.
 *
 * No clock in its inputs: `pulumi preview` of an unchanged stack shows no change at any hour. The
 * material says until when it is valid (`validUntil`, from the node's clock when it was made); a join
 * that failed and is retried after that refuses to start and names this resource, whose replacement
 * (`pulumi up --replace <its URN>`) makes new material: the component cannot tell at preview whether a
 * join is still to come, so it never replaces material on its own.
 *
 * Delete (the node left the stack): the Node object is deleted, after the node's `join` delete ran
 * `kubeadm reset` on it (kubeadm's documented order: drain, reset, delete the Node), and only when this
 * resource holds the last ownership claim here (so a rename or a replacement deletes nothing).
 */
import { claimCall, releasingDelete } from "../scripts/claim";
import { renderScript } from "../scripts/script";
import { shellQuote } from "../scripts/quote";
import { ADMIN_KUBECONFIG, KUBECTL } from "../scripts/kubectl";
import { durationSeconds } from "../kubeadm/duration";
import type { StepScripts } from "../scripts/types";
import type { JoinMaterial } from "../kubeadm/kubeadmConfig";
import type { StepKind } from "./kind";
import { stillWantedLines } from "../scripts/members";

/**
 * Make fresh join material for `node` on the first control-plane node: a bootstrap token
 * (`kubeadm token create --ttl <ttl> --print-join-command`: endpoint, token, CA hash) and, for a
 * control-plane node, a new certificate key (`kubeadm init phase upload-certs --upload-certs`, valid
 * 2 h). Prints `apiServerEndpoint=`, `token=`, `caCertHash=`, `certificateKey=` and `validUntil=`
 * (epoch seconds: the token's lifetime, for a control-plane node at most the certificates' 2 h,
 * counted from before they were made) lines, then claims the material's node for this resource.
 * kubeadm's own messages go to a 0600 file and, on failure, to stderr with secrets masked. Update: the
 * same, claiming only if this resource holds no claim. Delete: `kubectl delete node` when this resource
 * holds the last claim (and only while the cluster exists), dropping it once the Node is deleted.
 *
 * @param input.tokenTtl kubeadm duration text, e.g. `2h0m0s`.
 * @throws Error when tokenTtl is not a positive kubeadm duration (`XhYmZs`).
 */
export function joinTokenScripts(input: JoinTokenInput): StepScripts {
  const { node, controlPlane, tokenTtl } = input;
  const lines = joinMaterialLines(tokenTtl, controlPlane);
  return {
    create: renderScript(node, [...lines, claimCall("pk_claim", input.scope, input.owner)]),
    update: renderScript(node, [...lines, claimCall("pk_claim_once", input.scope, input.owner, input.formerOwners)]),
    delete: renderScript(node, [
      `[ -f ${ADMIN_KUBECONFIG} ] || exit 0`,
      ...releasingDelete(input.scope, input.owner, [
        ...stillWantedLines(node),
        `if pk_node_registered ${shellQuote(node)} removal; then ${KUBECTL} delete node ${shellQuote(node)} >&2; fi`,
      ]),
    ]),
  };
}

/**
 * The bash line (for the first control-plane node: lib.sh's `pk_join_material`) that makes fresh join material and prints it:
 * `kubeadm token create --ttl <ttl> --print-join-command` (endpoint, token, CA hash) and, for a
 * control-plane node, a new certificate key (`kubeadm init phase upload-certs --upload-certs`, valid
 * 2 h); then the lines `apiServerEndpoint=`, `token=`, `caCertHash=`, `certificateKey=` (empty for
 * workers) and `validUntil=` (epoch seconds: the token's lifetime, for a control-plane node at most
 * the certificates' 2 h, counted from before they were made). kubeadm's own messages go to a 0600
 * file and, on failure, to stderr with secrets masked. Shared by `join-token` (one node) and
 * `join-material` (a join wave of workers).
 *
 * @param tokenTtl kubeadm duration text, e.g. `2h0m0s`.
 * @throws Error when tokenTtl is not a positive kubeadm duration (`XhYmZs`).
 */
export function joinMaterialLines(tokenTtl: string, controlPlane: boolean): string[] {
  const ttl = durationSeconds(tokenTtl) ?? 0;
  if (!(ttl > 0)) {
    throw new Error(`joinTokenTtl: must be a kubeadm duration such as 2h0m0s, got ${JSON.stringify(tokenTtl)}`);
  }
  // kubeadm's uploaded certificates live 2 h (its certificate-key token); the material is valid while both live.
  const lifetime = controlPlane ? Math.min(ttl, CERTIFICATE_KEY_SECONDS) : ttl;
  return [`pk_join_material ${shellQuote(tokenTtl)} ${lifetime} ${controlPlane ? "yes" : "no"}`];
}

/** What the join-token step needs. */
export interface JoinTokenInput {
  /** The node that will join. */
  node: string;
  controlPlane: boolean;
  /** kubeadm duration text, e.g. `2h0m0s`. */
  tokenTtl: string;
  /** The step id: the scope of the ownership claim. */
  scope: string;
  /** The resource's logical name: the owner the claim names. */
  owner: string;
  /** Its names under the Cluster's earlier names (aliases), whose claims an update takes over. */
  formerOwners?: string[];
}

/** How long kubeadm keeps uploaded control-plane certificates (its certificate-key token), seconds. */
export const CERTIFICATE_KEY_SECONDS = 7200;

/**
 * Until when the material a join-token step printed is valid (`validUntil=`, epoch seconds on the
 * first control-plane node's clock), or undefined when it does not say (material made by an older
 * version of this component).
 */
export function materialValidUntil(stdout: string): number | undefined {
  const m = /^validUntil=([0-9]+)$/m.exec(stdout);
  return m ? Number(m[1]) : undefined;
}

/**
 * Read the join material a join-token step printed.
 *
 * @throws Error (without the secret values) when a field is missing.
 */
export function parseJoinMaterial(stdout: string): JoinMaterial {
  const fields = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  const get = (k: string) => {
    const v = fields.get(k);
    if (!v) throw new Error(`join material: ${k} missing from the output of the step that made it`);
    return v;
  };
  const key = fields.get("certificateKey");
  return {
    apiServerEndpoint: get("apiServerEndpoint"),
    token: get("token"),
    caCertHashes: [get("caCertHash")],
    ...(key ? { certificateKey: key } : {}),
  };
}

/** `join-token`: join material for one node, made on the first control-plane node. */
export const joinToken: StepKind = {
  action: "join-token",
  summary: ({ node }) =>
    `make fresh join material: bootstrap token, CA certificate hash${node.role === "control-plane" ? ", certificate key" : ""} (secret)`,
  scripts: ({ node, settings, step, owner, formerOwners }) =>
    joinTokenScripts({
      node: node.name,
      controlPlane: node.role === "control-plane",
      tokenTtl: settings.joinTokenTtl,
      scope: step.id,
      owner,
      formerOwners,
    }),
  secretOutput: true,
};

/**
 * `join-token` of a worker: as `joinToken`, but its create runs no command on a worker that joins in this
 * run (`idleOnJoin`): its join wave's `join-material` made the material and wrote this step's claim. On a
 * worker that had joined before (the step made anew, e.g. by `--replace`) the create runs and claims.
 */
export const workerJoinToken: StepKind = {
  ...joinToken,
  summary: () =>
    "holds the claim that deletes the Node object when the node leaves; on a node that joins in this run nothing runs (its join wave's join-material makes its material), else fresh join material (secret)",
  idleOnJoin: true,
  // An upgrade after its node joined in a wave makes no bootstrap token for it.
  idleCreateKept: true,
};
