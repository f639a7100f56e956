/**
 * TEST DOUBLE knowledge (lab stand-in, not real kubeadm): what each kubeadm minor knows, after
 * ../../../../shared/kubeadm-facts.md. The gate lists per minor are approximate except for
 * NodeLocalCRISocket, which follows the facts file exactly.
 */
import { boolFlag, type Cli, Fail } from "./common";

export type Stage = "ALPHA" | "BETA" | "GA" | "DEPRECATED";
export interface Gate {
  default: boolean;
  stage: Stage;
  /** The text `upgrade apply` prints for a deprecated gate left in the cluster (features.CheckDeprecatedFlags). */
  deprecationMessage?: string;
}

/**
 * kubeadm's own feature gates (features.InitFeatureGates) per minor, as in kubeadm's source
 * (features/features.go of v1.31.14 ... v1.37.2).
 */
export function kubeadmGates(minor: number): Record<string, Gate> {
  const g: Record<string, Gate> = { RootlessControlPlane: { default: false, stage: "ALPHA" } };
  if (minor <= 36) {
    g.PublicKeysECDSA = {
      default: false,
      stage: "DEPRECATED",
      deprecationMessage:
        "The PublicKeysECDSA feature gate is deprecated and will be removed when v1beta3 is removed. v1beta4 supports a new option 'ClusterConfiguration.EncryptionAlgorithm'.",
    };
  }
  if (minor === 31) g.EtcdLearnerMode = { default: true, stage: "BETA" };
  else if (minor === 32) g.EtcdLearnerMode = { default: true, stage: "GA" };
  if (minor <= 32) g.WaitForAllControlPlaneComponents = { default: false, stage: "ALPHA" };
  else if (minor === 33) g.WaitForAllControlPlaneComponents = { default: true, stage: "BETA" };
  else if (minor === 34) g.WaitForAllControlPlaneComponents = { default: true, stage: "GA" };
  if (minor <= 32) g.ControlPlaneKubeletLocalMode = { default: false, stage: "ALPHA" };
  else if (minor <= 34) g.ControlPlaneKubeletLocalMode = { default: true, stage: "BETA" };
  else if (minor === 35) g.ControlPlaneKubeletLocalMode = { default: true, stage: "GA" };
  if (minor >= 32 && minor <= 33) g.NodeLocalCRISocket = { default: false, stage: "ALPHA" };
  else if (minor >= 34 && minor <= 35) g.NodeLocalCRISocket = { default: true, stage: "BETA" };
  else if (minor === 36) g.NodeLocalCRISocket = { default: true, stage: "GA" };
  return g;
}

/** Go's `%#v` of a map[string]bool (fmt prints maps with sorted keys). */
function goMapBool(m: Record<string, boolean>): string {
  return `map[string]bool{${Object.keys(m).sort().map((k) => `"${k}":${m[k]}`).join(", ")}}`;
}

/** encoding/json of a map[string]bool (keys sorted, no spaces). */
function jsonMapBool(m: Record<string, boolean>): string {
  return `{${Object.keys(m).sort().map((k) => `${JSON.stringify(k)}:${m[k]}`).join(",")}}`;
}

/**
 * kubeadm's ValidateFeatureGates for the given minor. Returns the error lines (empty when valid).
 * Verified in kubeadm's validation.go: it checks NAMES only (features.Supports: unknown or deprecated
 * gates are refused), with `field.Invalid(featureGates, <whole map>, "X is not a valid feature name.")`;
 * there is no lock check, so `NodeLocalCRISocket: false` passes on 1.36 (facts file, 1.36 row). The
 * map prints as a Go map up to 1.33 and as JSON from 1.34 (#132314).
 */
export function validateFeatureGates(minor: number, gates: Record<string, boolean>, field = "featureGates"): string[] {
  const known = kubeadmGates(minor);
  const value = minor >= 34 ? jsonMapBool(gates) : goMapBool(gates);
  return Object.keys(gates)
    .sort()
    .filter((k) => !known[k] || known[k].stage === "DEPRECATED")
    .map((k) => `${field}: Invalid value: ${value}: ${k} is not a valid feature name.`);
}

/** field.ErrorList.ToAggregate().Error(): one error as is, several as `[a, b]`. */
export function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`;
}

/**
 * Fails like kubeadm's config validation (init/join --config) on gates {@link validateFeatureGates}
 * refuses: a field.ErrorList aggregate, which kubeadm up to 1.33 exits with 3 (ValidationExitCode in
 * util/error.go) and from 1.34 with 1, like every other error.
 */
export function assertFeatureGates(minor: number, gates: Record<string, boolean>): void {
  const errs = validateFeatureGates(minor, gates);
  if (errs.length === 0) return;
  const fail = kubeadmError(minor, aggregate(errs));
  throw minor <= 33 ? new Fail(fail.message, 3) : fail;
}

/**
 * features.CheckDeprecatedFlags, which `upgrade apply` runs in its preflight phase on the gates of the
 * kubeadm-config ConfigMap (verified in kubeadm's source; the stored config is only decoded, never
 * validated): one line per unknown gate (`Unknown feature gate flag: X`) or deprecated gate (its
 * deprecation message), keys sorted here (kubeadm iterates a Go map).
 */
export function deprecatedGateMessages(minor: number, gates: Record<string, boolean>): string[] {
  const known = kubeadmGates(minor);
  return Object.keys(gates)
    .sort()
    .flatMap((k) => (!known[k] ? [`Unknown feature gate flag: ${k}`] : known[k].stage === "DEPRECATED" ? [known[k].deprecationMessage ?? ""] : []));
}

/**
 * Whether NodeLocalCRISocket is in effect: the explicit entry if any, else the minor's default
 * (features.Enabled). 1.36 still honours an explicit `false` (checked in its source: every path asks
 * features.Enabled; the facts file says the disabled path is gone); 1.37 has no gate and is always
 * node-local.
 */
export function nodeLocalCriSocket(minor: number, gates: Record<string, boolean>): boolean {
  if (minor <= 31) return false;
  if (minor >= 37) return true;
  return gates.NodeLocalCRISocket ?? kubeadmGates(minor).NodeLocalCRISocket.default;
}

/** The pause image kubeadm passes with --pod-infra-container-image (written up to 1.34). */
export function pauseImage(minor: number): string {
  return minor >= 34 ? "registry.k8s.io/pause:3.10.1" : "registry.k8s.io/pause:3.10";
}

/** kubelet flags a kubelet of this minor no longer accepts, with the minor that removed them. */
export const REMOVED_KUBELET_FLAGS: { flag: string; removedIn: number }[] = [
  { flag: "network-plugin", removedIn: 24 },
  { flag: "container-runtime", removedIn: 27 },
  { flag: "pod-infra-container-image", removedIn: 35 },
];

export const STACK_TRACE_HINT = "To see the stack trace of this error execute with --v=5 or higher";

/**
 * A kubeadm command failure as kubeadm prints it. From 1.34 kubeadm prefixes `error: ` (seen in
 * kubeadm 1.34 output; the exact minor where that started is UNVERIFIED).
 */
export function kubeadmError(minor: number, message: string): Fail {
  return new Fail(`${minor >= 34 ? "error: " : ""}${message}\n${STACK_TRACE_HINT}`, 1);
}

/**
 * A boolean flag of a kubeadm command (see {@link boolFlag}), read before the command does anything;
 * a bad value fails with kubeadm's error ({@link kubeadmError}) holding pflag's message.
 */
export function kubeadmBool(cli: Cli, minor: number, name: string): boolean {
  return boolFlag(cli, name, (m) => kubeadmError(minor, m));
}

/** A failed phase: `error execution phase <phase>: <message>`. */
export function phaseError(minor: number, phase: string, message: string): Fail {
  return kubeadmError(minor, `error execution phase ${phase}: ${message}`);
}

/** Preflight errors, kubeadm's format. `ignored` holds --ignore-preflight-errors names (or `all`). */
export function preflight(minor: number, checks: { name: string; error: string }[], ignored: string[]): void {
  const lower = ignored.map((i) => i.toLowerCase());
  const fatal = checks.filter((c) => !lower.includes("all") && !lower.includes(c.name.toLowerCase()));
  for (const c of checks.filter((c) => !fatal.includes(c))) process.stdout.write(`\t[WARNING ${c.name}]: ${c.error}\n`);
  if (fatal.length === 0) return;
  throw phaseError(
    minor,
    "preflight",
    `[preflight] Some fatal errors occurred:\n${fatal.map((c) => `\t[ERROR ${c.name}]: ${c.error}\n`).join("")}` +
      "[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`",
  );
}
