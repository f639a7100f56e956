/**
 * `up` arguments: `--nodes N [--version v1.33.2] [--runtimes SPEC]` or `<stack file> [--version V]`.
 * SPEC gives node i (1-based, in order) the i-th comma-separated entry; an entry is runtimes joined
 * by `+`, or `none`; nodes past the list get containerd. `containerd,crio,none,crio+containerd`.
 */
import { parseArgs } from "node:util";
import { readStackFile } from "./stackfile";
import { DEFAULT_VERSION, LabSpec, Runtime, addressOf, canonicalVersion, isRuntime, validateSpec } from "./spec";

export interface UpArgs {
  spec: LabSpec;
  /** tear a running lab down and start anew instead of reusing it */
  fresh: boolean;
}

export function parseRuntimes(spec: string): Runtime[][] {
  return spec.split(",").map((entry) => {
    const e = entry.trim();
    if (e === "none" || e === "") return [];
    return e.split("+").map((r) => {
      if (!isRuntime(r)) throw new Error(`--runtimes: unknown runtime ${JSON.stringify(r)} (containerd, crio, cri-dockerd, none)`);
      return r;
    });
  });
}

export function labSpecForCount(count: number, version: string, runtimes: Runtime[][] = []): LabSpec {
  if (!Number.isInteger(count) || count < 1) throw new Error(`--nodes: ${count} is not a positive whole number`);
  const nodes = Array.from({ length: count }, (_, i) => ({
    name: `node-${i + 1}`,
    address: addressOf(i),
    port: 22,
    runtimes: runtimes[i] ?? (["containerd"] as Runtime[]),
  }));
  return validateSpec({ version: canonicalVersion(version), nodes });
}

export function parseUpArgs(args: string[]): UpArgs {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      nodes: { type: "string" },
      version: { type: "string" },
      runtimes: { type: "string" },
      fresh: { type: "boolean", default: false },
    },
  });
  const fresh = values.fresh === true;
  if (positionals.length > 1) throw new Error(`up: one stack file at most, got ${positionals.join(" ")}`);
  const stackFile = positionals[0];
  if (stackFile !== undefined) {
    if (values.nodes !== undefined || values.runtimes !== undefined) {
      throw new Error("up: give a stack file or --nodes/--runtimes, not both");
    }
    const spec = readStackFile(stackFile);
    return { spec: values.version ? { ...spec, version: canonicalVersion(values.version) } : spec, fresh };
  }
  if (values.nodes === undefined) throw new Error("up: give --nodes N or a stack file");
  const runtimes = values.runtimes !== undefined ? parseRuntimes(values.runtimes) : [];
  const count = Number(values.nodes);
  if (runtimes.length > count) throw new Error(`--runtimes lists ${runtimes.length} nodes, --nodes is ${count}`);
  return { spec: labSpecForCount(count, values.version ?? DEFAULT_VERSION, runtimes), fresh };
}
