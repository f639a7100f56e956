/**
 * The `NodeLocalCRISocket` feature gate: whether it is in effect, and the featureGates map kubeadm
 * is given. Rule: honour or refuse. A value the version does anyway is accepted; a value it cannot
 * honour is refused with the reason. Source: kubeadm-facts.md timeline (#131981 beta default on,
 * #135742 GA locked on, #138645 removed in 1.37).
 */
import { KubeadmConfigError, KubeVersion } from "./types";
import { parseKubernetesVersion, versionFacts } from "./version";

/** The kubeadm feature gate of KEP-4656. */
export const NODE_LOCAL_CRI_SOCKET = "NodeLocalCRISocket";

const FIELD = `featureGates.${NODE_LOCAL_CRI_SOCKET}`;

/** One of kubeadm's own feature gates (`features.InitFeatureGates`) and the minors that know it. */
export interface KubeadmGate {
  name: string;
  /** First minor whose kubeadm knows the gate. */
  since: number;
  /** First minor whose kubeadm no longer knows it (removed); undefined while it exists. */
  removedIn?: number;
  /**
   * First minor where it is deprecated: kubeadm's validation refuses a deprecated gate like an unknown
   * one (`features.Supports` is false for it).
   */
  deprecatedIn?: number;
}

/**
 * kubeadm's own feature gates by minor (only these go in ClusterConfiguration.featureGates; kubelet and
 * API server gates are other components' and kubeadm refuses them: "X is not a valid feature name.").
 * NodeLocalCRISocket and ControlPlaneKubeletLocalMode (GA 1.35 #134106, removed 1.36 #135773) follow
 * kubeadm-facts.md; the other rows follow kubeadm's changelogs (PublicKeysECDSA deprecated since 1.30,
 * EtcdLearnerMode GA in 1.32 and gone in 1.33, WaitForAllControlPlaneComponents GA in 1.34 and gone in
 * 1.35) and are not checked against every release's source.
 */
export const KUBEADM_GATES: readonly KubeadmGate[] = Object.freeze([
  { name: NODE_LOCAL_CRI_SOCKET, since: 32, removedIn: 37 },
  { name: "ControlPlaneKubeletLocalMode", since: 31, removedIn: 36 },
  { name: "EtcdLearnerMode", since: 27, removedIn: 33 },
  { name: "PublicKeysECDSA", since: 19, deprecatedIn: 30 },
  { name: "RootlessControlPlane", since: 22 },
  { name: "WaitForAllControlPlaneComponents", since: 30, removedIn: 35 },
]);

/** Whether kubeadm of this minor accepts `name` in featureGates (known there and not deprecated). */
function acceptedAt(gate: KubeadmGate, minor: number): boolean {
  return gate.since <= minor && (gate.removedIn === undefined || minor < gate.removedIn) && (gate.deprecatedIn === undefined || minor < gate.deprecatedIn);
}

/** The names kubeadm of this minor accepts in ClusterConfiguration.featureGates, sorted. */
export function kubeadmGateNames(minor: number): string[] {
  return KUBEADM_GATES.filter((g) => acceptedAt(g, minor)).map((g) => g.name).sort();
}

/**
 * Refuses a featureGates entry kubeadm of `version` would refuse at `kubeadm init` (validation checks
 * the names: unknown or deprecated gates fail with "X is not a valid feature name."), so the error
 * comes at preview, naming the gate. NodeLocalCRISocket is left to {@link resolve} (honour or refuse).
 * @throws KubeadmConfigError (field `featureGates.<name>`).
 */
function checkKubeadmKnows(version: KubeVersion, gates: Record<string, boolean>): void {
  for (const name of Object.keys(gates)) {
    if (name === NODE_LOCAL_CRI_SOCKET) continue;
    const gate = KUBEADM_GATES.find((g) => g.name === name);
    if (gate !== undefined && acceptedAt(gate, version.minor)) continue;
    const refusal = `kubeadm ${version.text} would refuse it ("${name} is not a valid feature name.")`;
    let why: string;
    if (gate === undefined) {
      why =
        `is not a kubeadm feature gate; ${refusal}. kubeadm's own gates on ${version.text}: ${kubeadmGateNames(version.minor).join(", ")}. ` +
        `A kubelet feature gate goes in kubeletConfiguration.featureGates (for example {featureGates: {${name}: ${gates[name]}}})`;
    } else if (gate.since > version.minor) {
      why = `came to kubeadm in 1.${gate.since}; ${refusal}. Remove the entry or use 1.${gate.since} or newer`;
    } else if (gate.removedIn !== undefined && version.minor >= gate.removedIn) {
      why = `was removed from kubeadm in 1.${gate.removedIn} (what it gated is now always on); ${refusal}. Remove the entry`;
    } else {
      why = `is deprecated in kubeadm since 1.${gate.deprecatedIn}, and kubeadm refuses deprecated gates; ${refusal}. Remove the entry`;
    }
    throw new KubeadmConfigError(`featureGates.${name}`, why);
  }
}

/**
 * Checks that `featureGates` is a plain object of booleans whose names are not case variants of
 * kubeadm's gates (`NodeLocalCriSocket` is refused with a hint naming `NodeLocalCRISocket`).
 * @throws KubeadmConfigError (field `featureGates` or `featureGates.<name>`).
 */
export function checkFeatureGateValues(featureGates: unknown): Record<string, boolean> {
  if (featureGates === undefined || featureGates === null) return {};
  if (typeof featureGates !== "object" || Array.isArray(featureGates)) {
    throw new KubeadmConfigError("featureGates", "must be a map of gate name to true/false");
  }
  const out: Record<string, boolean> = {};
  for (const [name, value] of Object.entries(featureGates as Record<string, unknown>)) {
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) {
      throw new KubeadmConfigError("featureGates", `${JSON.stringify(name)} is not a feature gate name`);
    }
    const known = KUBEADM_GATES.map((g) => g.name).find((g) => g !== name && g.toLowerCase() === name.toLowerCase());
    if (known !== undefined) {
      throw new KubeadmConfigError(
        `featureGates.${name}`,
        `is not a kubeadm feature gate; did you mean ${known}? Gate names are case-sensitive, and kubeadm refuses unknown gates`,
      );
    }
    if (typeof value !== "boolean") {
      throw new KubeadmConfigError(`featureGates.${name}`, `must be true or false, got ${JSON.stringify(value) ?? typeof value}`);
    }
    out[name] = value;
  }
  return out;
}

function resolve(version: KubeVersion, gates: Record<string, boolean>): boolean {
  const facts = versionFacts(version);
  const requested = gates[NODE_LOCAL_CRI_SOCKET];
  if (requested === undefined) return facts.gateDefault;
  if (facts.gate === "absent") {
    if (requested) {
      throw new KubeadmConfigError(
        FIELD,
        `kubeadm ${version.text} has no ${NODE_LOCAL_CRI_SOCKET} gate (added as alpha in 1.32); ` +
          `kubeadm would refuse it ("${NODE_LOCAL_CRI_SOCKET} is not a valid feature name."). Use 1.32 or newer, or remove the entry`,
      );
    }
    return false; // what 1.31 does anyway
  }
  if (!requested && !facts.gateSettableFalse) {
    const why =
      facts.gate === "removed"
        ? `the gate was removed in 1.37 (#138645) and node-local CRI sockets are always on`
        : `the gate is GA and locked to true in 1.36, and 1.37 has no legacy flag/annotation path left, so a cluster kept legacy on 1.36 could not be upgraded`;
    throw new KubeadmConfigError(FIELD, `cannot be false on kubeadm ${version.text}: ${why}. Remove the entry`);
  }
  return requested;
}

/**
 * Whether node-local CRI sockets (instance-config.yaml instead of the kubelet flag and Node
 * annotation) are in effect for this version and these gates: the explicit entry if present, else
 * the minor's default (an absent key means "default", not "off": #132303).
 * @param kubernetesVersion `v1.34.2` or `1.34.2`.
 * @param featureGates ClusterConfiguration.featureGates as the user wrote it.
 * @throws KubeadmConfigError: malformed/unsupported version (`kubernetesVersion`), non-boolean values
 *   or a case variant of a kubeadm gate name (`featureGates.<name>`), `true` on 1.31, `false` on 1.36 or 1.37 (`featureGates.NodeLocalCRISocket`).
 */
export function nodeLocalCriSocketEnabled(kubernetesVersion: string, featureGates?: Record<string, boolean>): boolean {
  return resolve(parseKubernetesVersion(kubernetesVersion), checkFeatureGateValues(featureGates));
}

/**
 * The featureGates map kubeadm is given: the user's map minus `NodeLocalCRISocket` where kubeadm
 * would reject the key (1.31: unknown gate; 1.37: removed). Validates like
 * {@link nodeLocalCriSocketEnabled} (honour or refuse) first, and refuses every other gate kubeadm of
 * this minor does not accept ({@link KUBEADM_GATES}): a kubelet or API server gate such as
 * `GracefulNodeShutdown`, a gate removed at this minor (ControlPlaneKubeletLocalMode on 1.36), a
 * deprecated one.
 * @returns a new object, keys in the user's order; `{}` when nothing is left.
 * @throws KubeadmConfigError as {@link nodeLocalCriSocketEnabled}, and (field `featureGates.<name>`)
 *   on a gate kubeadm of this minor would refuse, naming it and, for a gate kubeadm never had,
 *   pointing to kubeletConfiguration.featureGates.
 */
export function kubeadmFeatureGates(version: KubeVersion, featureGates?: Record<string, boolean>): Record<string, boolean> {
  const gates = checkFeatureGateValues(featureGates);
  resolve(version, gates);
  checkKubeadmKnows(version, gates);
  if (!versionFacts(version).gateKnown) delete gates[NODE_LOCAL_CRI_SOCKET];
  return gates;
}
