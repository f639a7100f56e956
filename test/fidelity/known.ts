/**
 * Differences between real kubeadm and the lab's stand-in that the fidelity test has found and that
 * are explained (each waits for a fix in the stand-in, or says why it does not matter to the lab).
 * A difference not listed here fails `npm run fidelity`; so does an entry that no case shows any more
 * (remove it once the stand-in is fixed).
 */
import { CONFIG_YAML as CONFIG, FLAGS_ENV as FLAGS, CaseKey, Gate, Phase } from "./cases";
import { OUTCOME } from "./compare";

/** One explained difference: which cases and which artifact it covers, the diff lines it explains, and why. */
export interface KnownDifference {
  /** short id shown in the table */
  id: string;
  /** the phases it applies to (all when absent) */
  phases?: Phase[];
  /** kubeadm minors it applies to (inclusive range) */
  minors: [number, number];
  /** gate settings (all when absent) */
  gates?: Gate[];
  /** input ids (all when absent) */
  inputs?: string[];
  /** the artifacts: file paths, or `outcome` */
  artifacts: string[];
  /** the changed diff lines it explains (`-` real, `+` stand-in), each matched whole */
  lines: RegExp[];
  /** what real kubeadm does, what the stand-in does, and why it is accepted for now */
  reason: string;
}

/** The explained differences (see the module comment). */
export const KNOWN_DIFFERENCES: KnownDifference[] = [
  {
    id: "patches-dir",
    minors: [31, 36],
    inputs: ["patch-config"],
    artifacts: [CONFIG],
    lines: [/-containerRuntimeEndpoint: unix:\/\/\/run\/patched\.sock/, /\+containerRuntimeEndpoint: .*/],
    reason:
      "kubeadm applies the kubeletconfiguration patches of InitConfiguration `patches.directory` to config.yaml (before " +
      "instance-config.yaml, so they show only where the gate is off); the stand-in ignores `patches`.",
  },
];

/** The changed lines of a unified diff (`-x` / `+x`), headers left out. */
export function changedLines(diff: string): string[] {
  return diff.split("\n").filter((l) => /^[-+]/.test(l) && !/^(---|\+\+\+) /.test(l));
}

/** How a case's artifact difference is explained: the entries that explain some of its lines, and the lines none explains. */
export interface Explanation {
  known: KnownDifference[];
  unexplained: string[];
}

/** Explains a difference of one artifact of one case with the entries that apply to it. */
export function explain(c: CaseKey, artifact: string, diff: string, known: readonly KnownDifference[] = KNOWN_DIFFERENCES): Explanation {
  const applicable = known.filter(
    (k) =>
      k.artifacts.includes(artifact) &&
      (k.phases === undefined || k.phases.includes(c.phase)) &&
      c.minor >= k.minors[0] &&
      c.minor <= k.minors[1] &&
      (k.gates === undefined || k.gates.includes(c.gate)) &&
      (k.inputs === undefined || k.inputs.includes(c.input.id)),
  );
  const used = new Set<KnownDifference>();
  const unexplained: string[] = [];
  for (const line of changedLines(diff)) {
    const k = applicable.find((a) => a.lines.some((re) => new RegExp(`^(?:${re.source})$`).test(line)));
    if (k) used.add(k);
    else unexplained.push(line);
  }
  return { known: [...used], unexplained };
}
