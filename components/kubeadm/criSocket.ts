/**
 * CRI endpoint normalisation and kubeadm's socket detection texts.
 *
 * Sources (kubernetes/kubernetes cmd/kubeadm, checked in source):
 * - scheme-less socket: `app/util/config/initconfiguration.go` (SetNodeRegistrationDynamicDefaults)
 *   and `resetconfiguration.go`: `if !strings.HasPrefix(cfg.CRISocket, "unix")` warn and prepend
 *   `unix://`.
 * - probe list and the "multiple" error: `app/util/runtime/runtime.go` (`defaultKnownCRISockets`,
 *   `detectCRISocketImpl`), socket paths from `app/constants/constants_unix.go`.
 */
import { goQuote } from "./goQuote";
import { KubeadmConfigError } from "./types";

/** kubeadm's default URL scheme for CRI endpoints (`DefaultContainerRuntimeURLScheme`). */
export const CRI_SOCKET_SCHEME = "unix";

/**
 * The sockets kubeadm probes, in order, when no criSocket is configured (containerd, CRI-O,
 * cri-dockerd). None found: kubeadm falls back to the first (containerd) and fails later in
 * preflight; several found: {@link multipleCriEndpointsMessage}.
 */
export const CRI_SOCKET_PROBE_ORDER: readonly string[] = Object.freeze([
  "unix:///var/run/containerd/containerd.sock",
  "unix:///var/run/crio/crio.sock",
  "unix:///var/run/cri-dockerd.sock",
]);

/** kubeadm's fallback when no socket is found (`constants.DefaultCRISocket`, containerd). */
export const DEFAULT_CRI_SOCKET = CRI_SOCKET_PROBE_ORDER[0];

/** Characters accepted in a socket path: safe in a shell word, a YAML plain scalar and a flag. */
const SAFE_PATH = /^[A-Za-z0-9._/@+-]+$/;

/**
 * Why `endpoint` is not a usable Linux CRI endpoint, or undefined when it is.
 * @returns a sentence fragment, or undefined.
 */
export function criSocketProblem(endpoint: unknown): string | undefined {
  if (typeof endpoint !== "string") return `must be a string, got ${typeof endpoint}`;
  if (endpoint === "") return "must not be empty";
  let path: string;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(endpoint);
  if (endpoint.startsWith("unix://")) {
    path = endpoint.slice("unix://".length);
    if (!path.startsWith("/")) return `${JSON.stringify(endpoint)}: unix:// needs an absolute path (unix:///run/...)`;
  } else if (scheme) {
    const s = scheme[1].toLowerCase();
    if (s === "tcp" || s === "npipe") {
      return `${JSON.stringify(endpoint)}: ${s}:// endpoints are not supported; use a unix:// socket on a Linux node`;
    }
    return `${JSON.stringify(endpoint)}: only unix:// endpoints (or an absolute socket path) are supported`;
  } else if (endpoint.startsWith("/")) {
    path = endpoint;
  } else {
    return `${JSON.stringify(endpoint)} is a relative path; give an absolute path or unix:///...`;
  }
  if (!SAFE_PATH.test(path)) {
    return `${JSON.stringify(endpoint)} holds characters that are not safe in a socket path (allowed: A-Z a-z 0-9 . _ / @ + -)`;
  }
  const segments = path.split("/");
  if (segments.includes("..")) return `${JSON.stringify(endpoint)}: ".." path segments are not allowed`;
  if (path.endsWith("/")) return `${JSON.stringify(endpoint)}: names a directory, not a socket`;
  return undefined;
}

/**
 * The endpoint with the `unix://` scheme: `unix:///run/x.sock` is returned as is, a bare absolute
 * path gets `unix://` prepended (as kubeadm does, with {@link criSocketSchemeWarning}).
 * @throws KubeadmConfigError (field `criSocket`) on an empty or relative path, `tcp://`, `npipe://`
 *   or any other scheme, `unix://` with a relative path, unsafe characters, or `..` segments.
 */
export function normalizeCriSocket(endpoint: string): string {
  const problem = criSocketProblem(endpoint);
  if (problem !== undefined) throw new KubeadmConfigError("criSocket", problem);
  return endpoint.startsWith("unix://") ? endpoint : `unix://${endpoint}`;
}

/**
 * kubeadm's deprecation warning for a criSocket without the `unix` prefix (logged with
 * klog.Warningf; this returns the message only, without klog's header), or undefined when kubeadm
 * prints none. kubeadm's condition is a plain prefix test on `unix`, mirrored here. The value is
 * Go `%q`-quoted, as in kubeadm.
 */
export function criSocketSchemeWarning(endpoint: string): string | undefined {
  if (endpoint.startsWith(CRI_SOCKET_SCHEME)) return undefined;
  return (
    "Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors " +
    `in the future. Automatically prepending scheme ${goQuote(CRI_SOCKET_SCHEME)} to the "criSocket" with value ${goQuote(endpoint)}. ` +
    "Please update your configuration!"
  );
}

/** kubeadm's exact error text when several of {@link CRI_SOCKET_PROBE_ORDER} exist on a node. */
export function multipleCriEndpointsMessage(found: string[]): string {
  return (
    "found multiple CRI endpoints on the host. Please define which one do you wish " +
    `to use by setting the 'criSocket' field in the kubeadm configuration file: ${found.join(", ")}`
  );
}
