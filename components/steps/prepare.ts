/**
 * Step kind `prepare`, on every node before kubeadm runs: check the node and settle its CRI socket.
 * Runs on all nodes in parallel; changes nothing on the node.
 */
import { renderScript } from "../scripts/script";
import { LIBRARY_PACKED } from "../scripts/library";
import { shellQuote } from "../scripts/quote";
import type { StepScripts } from "../scripts/types";
import { CRI_SOCKET_PROBE_ORDER, multipleCriEndpointsMessage, normalizeCriSocket } from "../kubeadm/criSocket";
import type { StepKind } from "./kind";

/** What the prepare step needs to know. */
export interface PrepareInput {
  node: string;
  /** The declared, normalised endpoint; undefined = detect. */
  criSocket?: string;
  /** kubeadm's probe list, in its order (CRI_SOCKET_PROBE_ORDER). */
  probeOrder: readonly string[];
  /** kubeadm's message for several sockets, split around the comma-separated list of what was found. */
  multipleMessage: { before: string; after: string };
  /**
   * NodeLocalCRISocket in effect: also fail when a --container-runtime-endpoint is set outside
   * kubeadm-flags.env (a kubelet systemd drop-in, /etc/default/kubelet, /etc/sysconfig/kubelet).
   */
  nodeLocalCriSocket: boolean;
  /** The target version, `v1.34.2`: part of the text, so the node reports again for every version. */
  version: string;
  /** The first control-plane node: also check the step from the cluster's version, when one exists there. */
  firstControlPlane: boolean;
}

/**
 * The prepare script, the node's first step: installs the shell library (lib.sh, content-addressed,
 * library.ts) that every later step on the node loads. Prints `criSocket=<endpoint>`, `kubeadmVersion=<kubeadm version -o short>`,
 * `kubeletVersion=<the installed kubelet's version>` (empty when no kubelet is installed) and
 * `joined=yes|no` (whether /etc/kubernetes/kubelet.conf exists: the node ran init or join before), then checks
 * kubeadm's version rules on the node and in the cluster (`pk_version_rules`: the kubelet's skew against
 * the API server and the target, and on the first control-plane node the cluster's version step). A
 * failed check fails the step, which is then not recorded: the next `up` reads the node again.
 * Fails naming the node when kubeadm is missing, the declared socket does not exist, detection finds
 * no socket or several (kubeadm's own message, with the sockets found), or (NodeLocalCRISocket in
 * effect) a file outside kubeadm-flags.env sets --container-runtime-endpoint (naming the file).
 */
export function prepareScripts(input: PrepareInput): StepScripts {
  const probes = input.probeOrder.map(shellQuote).join(" ");
  const body = [
    `: target ${shellQuote(input.version)}`,
    `command -v kubeadm >/dev/null || pk_fail "kubeadm is not installed (not on the PATH of $(id -un))"`,
    `version=$(kubeadm version -o short) || pk_fail "kubeadm version failed"`,
    ...(input.nodeLocalCriSocket ? ["pk_no_endpoint_flag_elsewhere"] : []),
    `declared=${shellQuote(input.criSocket ?? "")}`,
    `if [ -n "$declared" ]; then`,
    `  [ -S "\${declared#unix://}" ] || pk_fail "criSocket: no CRI socket at \${declared#unix://} (declared $declared)"`,
    `  endpoint=$declared`,
    `else`,
    `  found=()`,
    `  for probe in ${probes}; do`,
    `    if [ -S "\${probe#unix://}" ]; then found+=("$probe"); fi`,
    `  done`,
    `  case \${#found[@]} in`,
    `    0) pk_fail "criSocket: none set and no CRI socket found (kubeadm probes: ${input.probeOrder.join(", ")}); set criSocket or start a container runtime" ;;`,
    `    1) endpoint=\${found[0]} ;;`,
    `    *) list=$(printf '%s, ' "\${found[@]}"); pk_fail ${shellQuote(input.multipleMessage.before)}"\${list%, }"${shellQuote(input.multipleMessage.after)} ;;`,
    `  esac`,
    `fi`,
    `printf 'criSocket=%s\\nkubeadmVersion=%s\\n' "$endpoint" "$version"`,
    `kubelet=""`,
    `if command -v kubelet >/dev/null; then kubelet=$(kubelet --version 2>/dev/null | sed -n 's/^Kubernetes //p' || true); fi`,
    `printf 'kubeletVersion=%s\\n' "$kubelet"`,
    // Whether the node had joined a cluster (or run init) before this run: kubeadm writes kubelet.conf then.
    `if [ -e /etc/kubernetes/kubelet.conf ]; then echo joined=yes; else echo joined=no; fi`,
    `pk_version_rules ${shellQuote(input.version)} "$kubelet" ${input.firstControlPlane ? "yes" : "no"}`,
  ];
  return { create: renderScript(input.node, body, { installLibrary: true }) };
}

const LIST = "\u0000list\u0000";

/** kubeadm's several-sockets message split around its list, for the prepare script to fill in. */
function multipleMessage(): { before: string; after: string } {
  const [before = "", after = ""] = multipleCriEndpointsMessage([LIST]).split(LIST);
  return { before, after };
}

/** Read `criSocket=` from a prepare step's output, checked like a declared one. */
function detectedEndpoint(node: string, stdout: string): string {
  const line = stdout.split("\n").find((l) => l.startsWith("criSocket="));
  if (line === undefined) throw new Error(`node "${node}": criSocket: the prepare step reported no CRI socket`);
  return normalizeCriSocket(line.slice("criSocket=".length).trim());
}

/**
 * Whether a prepare step's output says the node had joined a cluster before this run (`joined=yes`).
 * Output without the line (a gone machine's kept step, a step recorded by an older version) counts as
 * joined: the node then keeps its place in the rollout line, the safe side.
 */
export function joinedBefore(stdout: string): boolean {
  return !/^joined=no$/m.test(stdout);
}

/** `prepare`: check kubeadm, settle the CRI socket (declared, or detected as kubeadm does). */
export const prepare: StepKind = {
  action: "prepare",
  shows: ["kubernetesVersion", "criSocket", "NodeLocalCRISocket"],
  summary: ({ node }) =>
    `check kubeadm is installed and the CRI socket (${
      node.criSocket !== undefined ? `declared ${node.criSocket}` : "detected on the node as kubeadm does"
    }); several sockets with none declared fail as kubeadm does; check the installed kubelet against kubeadm's skew policy and (first control-plane node) the cluster's version step, before anything changes`,
  scripts: ({ cluster, node }) =>
    prepareScripts({
      node: node.name,
      criSocket: node.criSocket,
      probeOrder: CRI_SOCKET_PROBE_ORDER,
      multipleMessage: multipleMessage(),
      nodeLocalCriSocket: cluster.nodeLocalCriSocket,
      version: cluster.version.text,
      firstControlPlane: node.name === cluster.controlPlane[0]?.name,
    }),
  // The packed shell library, which the script installs when the node lacks it (library.ts).
  stdin: { render: () => `${LIBRARY_PACKED}\n` },
  stdinHiddenFromDiff: true,
  endpointFrom: detectedEndpoint,
  joinedFrom: joinedBefore,
};
