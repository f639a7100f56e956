/**
 * The fidelity table: one row per minor and gate setting, one column per input, each cell `same`
 * or what differs (against the known differences, which carry their explanation).
 */
import { CaseKey, GATES } from "./cases";
import { ArtifactComparison, OUTCOME } from "./compare";
import { KnownDifference } from "./known";

/** One case's result. */
export interface CaseResult {
  case: CaseKey;
  /** the stand-in command that wrote the files (`init phase kubelet-start`, or `init` as fallback) */
  standinCommand: string;
  comparisons: ArtifactComparison[];
  /** differing artifacts, each with the known differences that explain its lines and the lines none explains */
  differences: Difference[];
}

/** One differing artifact of a case. */
export interface Difference {
  artifact: string;
  /** the known differences that explain some of its changed lines */
  known: KnownDifference[];
  /** changed lines no known difference explains (the case fails when any) */
  unexplained: string[];
  diff: string;
}

/** Short artifact names for table cells. */
export function shortName(artifact: string): string {
  if (artifact === OUTCOME) return "outcome";
  return artifact.replace(/^.*\//, "");
}

/** The text of one cell: `same`, or the known differences' ids and, for lines none explains, `NEW <artifact>`. */
export function cellText(r: CaseResult | undefined): string {
  if (!r) return "-";
  if (r.differences.length === 0) return "same";
  const ids = [...new Set(r.differences.flatMap((d) => d.known.map((k) => k.id)))];
  const fresh = r.differences.filter((d) => d.unexplained.length > 0).map((d) => `NEW ${shortName(d.artifact)}`);
  return [...ids, ...fresh].join(", ");
}

/** The gate column text: default, true, false. */
export function gateText(g: CaseKey["gate"]): string {
  return g === "default" ? "absent" : g === "on" ? "true" : "false";
}

/** A markdown table of one phase: rows minor x gate, columns the input ids given. */
export function renderTable(results: CaseResult[], versions: readonly string[], inputIds: readonly string[]): string {
  const head = ["kubeadm", "NodeLocalCRISocket", ...inputIds];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const v of versions) {
    for (const g of GATES) {
      const cells = inputIds.map((id) => cellText(results.find((r) => r.case.version === v && r.case.gate === g && r.case.input.id === id)));
      lines.push(`| ${v} | ${gateText(g)} | ${cells.join(" | ")} |`);
    }
  }
  return lines.join("\n") + "\n";
}

/** Pass/fail counts: a case passes when every difference it shows is a known one. */
export function counts(results: CaseResult[]): { passed: number; failed: number } {
  const failed = results.filter((r) => r.differences.some((d) => d.unexplained.length > 0)).length;
  return { passed: results.length - failed, failed };
}
