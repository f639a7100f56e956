/**
 * TEST DOUBLE knowledge (lab stand-in, not real kubeadm): what each kubeadm minor knows, after
 * ../../../../shared/kubeadm-facts.md. The gate lists per minor are approximate except for
 * NodeLocalCRISocket, which follows the facts file exactly.
 */
import { Fail } from "./common";

export type Stage = "ALPHA" | "BETA" | "GA" | "DEPRECATED";
export interface Gate {
  default: boolean;
  stage: Stage;
}

/** kubeadm's own feature gates (InitFeatureGates) per minor. Approximate outside NodeLocalCRISocket. */
export function kubeadmGates(minor: number): Record<string, Gate> {
  const g: Record<string, Gate> = {
    PublicKeysECDSA: { default: false, stage: "DEPRECATED" },
    RootlessControlPlane: { default: false, stage: "ALPHA" },
  };
  if (minor <= 32) g.EtcdLearnerMode = { default: true, stage: "GA" };
  if (minor <= 32) g.ControlPlaneKubeletLocalMode = { default: false, stage: "ALPHA" };
  else if (minor <= 34) g.ControlPlaneKubeletLocalMode = { default: true, stage: "BETA" };
  else g.ControlPlaneKubeletLocalMode = { default: true, stage: "GA" };
  if (minor <= 32) g.WaitForAllControlPlaneComponents = { default: false, stage: "ALPHA" };
  else if (minor === 33) g.WaitForAllControlPlaneComponents = { default: true, stage: "BETA" };
  else if (minor === 34) g.WaitForAllControlPlaneComponents = { default: true, stage: "GA" };
  if (minor >= 32 && minor <= 33) g.NodeLocalCRISocket = { default: false, stage: "ALPHA" };
  else if (minor >= 34 && minor <= 35) g.NodeLocalCRISocket = { default: true, stage: "BETA" };
  else if (minor === 36) g.NodeLocalCRISocket = { default: true, stage: "GA" };
  return g;
}

/** Go's `%#v` of a map[string]bool (fmt prints maps with sorted keys). */
function goMapBool(m: Record<string, boolean>): string {
  return `map[string]bool{${Object.keys(m).sort().map((k) => `"${k}":${m[k]}`).join(", ")}}`;
}

/**
 * kubeadm's ValidateFeatureGates for the given minor. Returns the error lines (empty when valid).
 * `X is not a valid feature name.` is verified in kubeadm's validation.go (field.Invalid on the whole
 * map). Deprecated gates count as unsupported there (features.Supports). The locked-gate text is
 * UNVERIFIED (kubeadm locks gates at GA; the wording follows component-base's featuregate).
 */
export function validateFeatureGates(minor: number, gates: Record<string, boolean>, field = "featureGates"): string[] {
  const known = kubeadmGates(minor);
  const errs: string[] = [];
  for (const k of Object.keys(gates).sort()) {
    const spec = known[k];
    if (!spec || spec.stage === "DEPRECATED") {
      errs.push(`${field}: Invalid value: ${goMapBool(gates)}: ${k} is not a valid feature name.`);
    } else if (spec.stage === "GA" && gates[k] !== spec.default) {
      errs.push(`${field}.${k}: Invalid value: ${gates[k]}: cannot set feature gate ${k} to ${gates[k]}, feature is locked to ${spec.default}`);
    }
  }
  return errs;
}

/** field.ErrorList.ToAggregate().Error(): one error as is, several as `[a, b]`. */
export function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`;
}

export function assertFeatureGates(minor: number, gates: Record<string, boolean>): void {
  const errs = validateFeatureGates(minor, gates);
  if (errs.length > 0) throw kubeadmError(minor, aggregate(errs));
}

/** Whether NodeLocalCRISocket is in effect: the explicit entry if any, else the minor's default. */
export function nodeLocalCriSocket(minor: number, gates: Record<string, boolean>): boolean {
  if (minor <= 31) return false;
  if (minor >= 36) return true;
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
