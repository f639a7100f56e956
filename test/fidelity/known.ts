/**
 * Differences between real kubeadm and the lab's stand-in that the fidelity test has found and that
 * are explained (each waits for a fix in the stand-in, or says why it does not matter to the lab).
 * A difference not listed here fails `npm run fidelity`; so does an entry that no case shows any more
 * (remove it once the stand-in is fixed).
 */
import { FidelityCase, Gate } from "./cases";

/** One explained difference: which cases and which artifact it covers, and why. */
export interface KnownDifference {
  /** short id shown in the table */
  id: string;
  /** kubeadm minors it applies to (inclusive range) */
  minors: [number, number];
  /** gate settings (all when absent) */
  gates?: Gate[];
  /** input ids (all when absent) */
  inputs?: string[];
  /** the artifact: a file path, or `outcome` */
  artifact: string;
  /** what real kubeadm does, what the stand-in does, and why it is accepted for now */
  reason: string;
}

/** The explained differences (see the module comment). */
export const KNOWN_DIFFERENCES: KnownDifference[] = [];

/** The known difference that covers this case's artifact, if any. */
export function knownDifference(c: FidelityCase, artifact: string, known: readonly KnownDifference[] = KNOWN_DIFFERENCES): KnownDifference | undefined {
  return known.find(
    (k) =>
      k.artifact === artifact &&
      c.minor >= k.minors[0] &&
      c.minor <= k.minors[1] &&
      (k.gates === undefined || k.gates.includes(c.gate)) &&
      (k.inputs === undefined || k.inputs.includes(c.input.id)),
  );
}
