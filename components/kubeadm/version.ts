/**
 * kubeadm versions: parsing, the supported range, and the ONE table of what each kubeadm minor does
 * with KEP-4656 (feature gate `NodeLocalCRISocket`). Everything version-dependent in this project
 * reads {@link versionFacts}; nothing else compares minors.
 *
 * Source: kubeadm's own source, read for v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3 and
 * v1.37.2 (phases/upgrade/postupgrade.go, cmd/phases/upgrade/..., util/config/cluster.go), and
 * kubeadm-facts.md for the rest (PR numbers are kubernetes/kubernetes). Where the two disagree the
 * source wins, and the field says so.
 */
import { KubeadmConfigError, KubeVersion } from "./types";

/** Kubernetes minors (of major 1) this project supports, ascending: 1.31 to 1.37. */
export const SUPPORTED_MINORS: readonly number[] = Object.freeze([31, 32, 33, 34, 35, 36, 37]);

const VERSION_RE = /^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

/**
 * Parses `v1.34.2` or `1.34.2` (exactly major.minor.patch, no pre-release or build suffix, no
 * leading zeros, no surrounding whitespace).
 * @returns the parsed version; `text` is canonical with the `v` prefix (`v1.34.2`).
 * @throws KubeadmConfigError (field `kubernetesVersion`) on malformed text, a major other than 1,
 *   or a minor outside {@link SUPPORTED_MINORS}.
 */
export function parseKubernetesVersion(text: string): KubeVersion {
  if (typeof text !== "string") {
    throw new KubeadmConfigError("kubernetesVersion", `expected a string like "v1.34.2", got ${typeof text}`);
  }
  const m = VERSION_RE.exec(text);
  if (!m) {
    throw new KubeadmConfigError(
      "kubernetesVersion",
      `${JSON.stringify(text)} is not a Kubernetes version of the form v1.MINOR.PATCH (for example "v1.34.2")`,
    );
  }
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const patch = Number(m[3]);
  if (!Number.isSafeInteger(major) || !Number.isSafeInteger(minor) || !Number.isSafeInteger(patch)) {
    throw new KubeadmConfigError("kubernetesVersion", `${JSON.stringify(text)}: number out of range`);
  }
  if (major !== 1 || !SUPPORTED_MINORS.includes(minor)) {
    throw new KubeadmConfigError(
      "kubernetesVersion",
      `${JSON.stringify(text)} is not supported: supported minors are 1.${SUPPORTED_MINORS[0]} to 1.${
        SUPPORTED_MINORS[SUPPORTED_MINORS.length - 1]
      }`,
    );
  }
  return { major, minor, patch, text: `v${major}.${minor}.${patch}` };
}

/** Stage of the `NodeLocalCRISocket` gate in one kubeadm minor. */
export type GateStage = "absent" | "alpha" | "beta" | "ga" | "removed";

/** What one kubeadm minor does about the CRI socket (KEP-4656). All booleans; no units. */
export interface VersionFacts {
  /** The minor (31 for 1.31). */
  minor: number;
  /** Stage of `NodeLocalCRISocket` in this minor. */
  gate: GateStage;
  /**
   * Whether kubeadm accepts the key `NodeLocalCRISocket` in `featureGates` at all. False on 1.31
   * (`NodeLocalCRISocket is not a valid feature name.`) and 1.37 (removed by #138645; kubeadm
   * rejects unknown gates).
   */
  gateKnown: boolean;
  /** Whether node-local sockets are in effect when the user does not set the gate (1.34+: #131981). */
  gateDefault: boolean;
  /** Whether the user may set the gate to true (1.32 to 1.36; on 1.37 the key itself is refused). */
  gateSettableTrue: boolean;
  /**
   * Whether this project lets the user set the gate to false: 1.32 to 1.35. On 1.36 the gate is GA
   * (LockToDefault) and kubeadm 1.36.3 still honours `false` at init, but 1.37 has no legacy path at
   * all, so a cluster kept legacy on 1.36 could not be upgraded cleanly: refused here.
   */
  gateSettableFalse: boolean;
  /**
   * With the gate on, `kubeadm upgrade` creates a MISSING instance-config.yaml (never rewrites one):
   * from the flag in kubeadm-flags.env up to 1.36 (`""` without the flag), from the socket it finds
   * (detected, containerd when that fails) in 1.37.
   */
  upgradeWritesInstanceConfig: boolean;
  /**
   * With the gate on, `kubeadm upgrade` removes `--container-runtime-endpoint` from
   * kubeadm-flags.env, but ONLY when it creates instance-config.yaml (1.33 to 1.36, #129279). On 1.32
   * it leaves the flag, which beats the config file (#129278); 1.37 never touches the flag (its
   * post-upgrade list of unwanted flags is empty; the facts file says it strips it).
   */
  upgradeRemovesFlag: boolean;
  /** With the gate on, `kubeadm upgrade` removes the cri-socket Node annotation (1.33 to 1.36, #129279; 1.37 never touches it). */
  upgradeRemovesAnnotationWhenGateOn: boolean;
  /** `kubeadm upgrade apply` removes its own node's annotation whatever the gate says (1.36 only, #135742). */
  upgradeRemovesAnnotationAlways: boolean;
  /** kubeadm writes `--pod-infra-container-image` into kubeadm-flags.env (up to 1.34). */
  writesPodInfraImage: boolean;
  /**
   * `kubeadm upgrade` removes `--pod-infra-container-image` from kubeadm-flags.env (1.35 only,
   * #133778; 1.36 emptied the list). Its post-upgrade phase then fails on a kubeadm-flags.env that
   * holds no flags (`KUBELET_KUBEADM_ARGS=""`, which 1.35 itself can leave).
   */
  upgradeRemovesPodInfraImage: boolean;
  /** kubeadm-flags.env may legitimately carry no flags at all: `KUBELET_KUBEADM_ARGS=""` (1.35+). */
  flagsFileMayBeEmpty: boolean;
  /** kubeadm still reads config API v1beta3 (removed in 1.37, #136016). This project renders v1beta4. */
  acceptsV1beta3: boolean;
}

type Row = Omit<VersionFacts, "minor">;

const legacy: Row = {
  gate: "absent",
  gateKnown: false,
  gateDefault: false,
  gateSettableTrue: false,
  gateSettableFalse: true,
  upgradeWritesInstanceConfig: false,
  upgradeRemovesFlag: false,
  upgradeRemovesAnnotationWhenGateOn: false,
  upgradeRemovesAnnotationAlways: false,
  writesPodInfraImage: true,
  upgradeRemovesPodInfraImage: false,
  flagsFileMayBeEmpty: false,
  acceptsV1beta3: true,
};

/** The table, one row per minor; each row lists only what changed from the previous one. */
const TABLE: ReadonlyMap<number, Row> = (() => {
  const rows = new Map<number, Row>();
  const r31 = legacy;
  const r32: Row = { ...r31, gate: "alpha", gateKnown: true, gateSettableTrue: true, upgradeWritesInstanceConfig: true };
  const r33: Row = { ...r32, upgradeRemovesFlag: true, upgradeRemovesAnnotationWhenGateOn: true };
  const r34: Row = { ...r33, gate: "beta", gateDefault: true };
  const r35: Row = { ...r34, writesPodInfraImage: false, upgradeRemovesPodInfraImage: true, flagsFileMayBeEmpty: true };
  const r36: Row = { ...r35, gate: "ga", gateSettableFalse: false, upgradeRemovesAnnotationAlways: true, upgradeRemovesPodInfraImage: false };
  const r37: Row = {
    ...r36,
    gate: "removed",
    gateKnown: false,
    gateSettableTrue: false,
    upgradeRemovesFlag: false,
    upgradeRemovesAnnotationWhenGateOn: false,
    upgradeRemovesAnnotationAlways: false,
    acceptsV1beta3: false,
  };
  [r31, r32, r33, r34, r35, r36, r37].forEach((row, i) => rows.set(31 + i, Object.freeze(row)));
  return rows;
})();

/**
 * What kubeadm of this minor does with the CRI socket; see {@link VersionFacts} for each field.
 * @throws KubeadmConfigError (field `kubernetesVersion`) for a version outside the table.
 */
export function versionFacts(v: KubeVersion): VersionFacts {
  const row = v.major === 1 ? TABLE.get(v.minor) : undefined;
  if (!row) {
    throw new KubeadmConfigError("kubernetesVersion", `no kubeadm facts for ${v.text}`);
  }
  return { minor: v.minor, ...row };
}

/** Negative, zero or positive as `a` is older than, equal to or newer than `b`. */
export function compareVersions(a: KubeVersion, b: KubeVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/**
 * kubeadm's upgrade policy: one minor at a time, patch upgrades within a minor fine, no downgrades.
 * The same version is accepted (nothing to do).
 * @throws KubeadmConfigError (field `kubernetesVersion`) on a downgrade or a skipped minor.
 */
export function checkUpgrade(from: KubeVersion, to: KubeVersion): void {
  if (compareVersions(to, from) < 0) {
    throw new KubeadmConfigError("kubernetesVersion", `cannot downgrade from ${from.text} to ${to.text}`);
  }
  if (to.major !== from.major || to.minor > from.minor + 1) {
    throw new KubeadmConfigError(
      "kubernetesVersion",
      `cannot upgrade from ${from.text} to ${to.text}: kubeadm upgrades one minor version at a time ` +
        `(next: v${from.major}.${from.minor + 1}.x)`,
    );
  }
}
