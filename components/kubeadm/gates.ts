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

/**
 * kubeadm feature gate names (kubeadm's own gates, not the components'), for catching a name that
 * differs only in case: kubeadm matches names exactly and refuses unknown ones at init, and this
 * component would treat a misspelt NodeLocalCRISocket as unset.
 */
const KNOWN_KUBEADM_GATES = [
  NODE_LOCAL_CRI_SOCKET,
  "ControlPlaneKubeletLocalMode",
  "EtcdLearnerMode",
  "PublicKeysECDSA",
  "RootlessControlPlane",
  "WaitForAllControlPlaneComponents",
];

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
    const known = KNOWN_KUBEADM_GATES.find((g) => g !== name && g.toLowerCase() === name.toLowerCase());
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
        : `the gate is GA and locked on from 1.36 (#135742); the legacy flag/annotation path is gone`;
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
 * {@link nodeLocalCriSocketEnabled} (honour or refuse) first.
 * @returns a new object, keys in the user's order; `{}` when nothing is left.
 * @throws KubeadmConfigError as {@link nodeLocalCriSocketEnabled}.
 */
export function kubeadmFeatureGates(version: KubeVersion, featureGates?: Record<string, boolean>): Record<string, boolean> {
  const gates = checkFeatureGateValues(featureGates);
  resolve(version, gates);
  if (!versionFacts(version).gateKnown) delete gates[NODE_LOCAL_CRI_SOCKET];
  return gates;
}
