/**
 * Step kind `join-token`, on the first control-plane node for each node that joins: fresh join
 * material (bootstrap token, CA hash, and for a control-plane node a certificate key). Its stdout is
 * secret (secret outputs, nothing logged); the `join` step reads it on a secret stdin.
 */
import { renderScript } from "../scripts/script";
import { durationSeconds } from "../kubeadm/duration";
import type { StepScripts } from "../scripts/types";
import type { JoinMaterial } from "../kubeadm/kubeadmConfig";
import type { StepKind } from "./kind";

/**
 * Make fresh join material for `node` on the first control-plane node: a bootstrap token
 * (`kubeadm token create --ttl <ttl> --print-join-command`: endpoint, token, CA hash) and, for a
 * control-plane node, a new certificate key (`kubeadm init phase upload-certs --upload-certs`, valid
 * 2 h). Prints `apiServerEndpoint=`, `token=`, `caCertHash=`, `certificateKey=` lines. kubeadm's own
 * messages go to a 0600 file and, on failure, to stderr with secrets masked.
 *
 * @param tokenTtl kubeadm duration text, e.g. `2h0m0s`.
 * @throws Error when tokenTtl is not a positive kubeadm duration (`XhYmZs`).
 */
export function joinTokenScripts(node: string, controlPlane: boolean, tokenTtl: string): StepScripts {
  if (!((durationSeconds(tokenTtl) ?? 0) > 0)) {
    throw new Error(`joinTokenTtl: must be a kubeadm duration such as 2h0m0s, got ${JSON.stringify(tokenTtl)}`);
  }
  return {
    create: renderScript(node, [
      `[ -f /etc/kubernetes/admin.conf ] || pk_fail "no /etc/kubernetes/admin.conf on the first control-plane node: kubeadm init has not run"`,
      `err=$(mktemp)`,
      `trap 'rm -f "$err"' EXIT`,
      `line=$(kubeadm token create --ttl ${tokenTtl} --print-join-command 2>"$err" | tail -n 1) || { pk_mask <"$err" >&2; pk_fail "kubeadm token create failed"; }`,
      `read -r -a words <<<"$line"`,
      `endpoint=\${words[2]:-}; token=""; hash=""`,
      `for ((i = 0; i < \${#words[@]}; i++)); do`,
      `  case \${words[i]} in`,
      `    --token) token=\${words[i+1]:-} ;;`,
      `    --discovery-token-ca-cert-hash) hash=\${words[i+1]:-} ;;`,
      `  esac`,
      `done`,
      `[ -n "$endpoint" ] && [ -n "$token" ] && [ -n "$hash" ] || pk_fail "could not read the join command kubeadm printed"`,
      `key=""`,
      ...(controlPlane
        ? [
            `key=$(kubeadm init phase upload-certs --upload-certs 2>"$err" | tail -n 1) || { pk_mask <"$err" >&2; pk_fail "kubeadm init phase upload-certs failed"; }`,
            `[[ $key =~ ^[0-9a-f]{64}$ ]] || pk_fail "could not read the certificate key kubeadm printed"`,
          ]
        : []),
      `printf 'apiServerEndpoint=%s\\ntoken=%s\\ncaCertHash=%s\\ncertificateKey=%s\\n' "$endpoint" "$token" "$hash" "$key"`,
    ]),
  };
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
    if (!v) throw new Error(`join material: ${k} missing from the join-token step's output`);
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
  scripts: ({ node, settings }) => joinTokenScripts(node.name, node.role === "control-plane", settings.joinTokenTtl),
  secretOutput: true,
  triggers: (_ctx, v) => [v.joinAttempt],
};
