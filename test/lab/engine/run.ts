/**
 * `pulumi preview | up | destroy | refresh` on a lab stack, through the Automation API, with the
 * engine's own events collected: which resource got which operation, which failed, the diagnostics,
 * and the summary. Nothing here decides what the engine does; it only records what it said.
 */
import { EngineEvent, OpType, Stack } from "@pulumi/pulumi/automation";
import { UNKNOWN, isSecret } from "../provider/values";

export type Mode = "preview" | "up" | "destroy" | "refresh";

/** One resource step the engine reported. */
export interface StepRecord {
  /** Logical name (the URN's last part), e.g. `lab-cp-1-init`. */
  name: string;
  type: string;
  urn: string;
  op: OpType;
  /** True when the engine reported the step done (resOutputs), false when it failed (resOpFailed); undefined in a preview or when it never finished. */
  done?: boolean;
  /** Property names the engine listed as changed (`diffs`), when it did. */
  diffs?: string[];
  /** Property names whose change forces a replacement (`detailedDiff` kinds *-replace). */
  replaceKeys?: string[];
  /** True when the resource's recorded state has a non-empty `delete` command (what a delete or replace would run). */
  oldDelete: boolean;
  /** Engine timestamps (seconds) of the step's start and end, when reported. */
  startedAt: number;
  endedAt?: number;
  /**
   * When this process received the engine's start and end events (epoch seconds, to the millisecond):
   * finer than the engine's whole seconds, and later than the events by up to the Automation API's
   * polling of the event log (200 ms) plus the engine's own write of them.
   */
  seenAt?: number;
  seenEndAt?: number;
}

export interface LabRunResult {
  mode: Mode;
  ok: boolean;
  /** Per resource step, in the order the engine started them. */
  steps: StepRecord[];
  /** The engine's summary: operation → count. */
  changes: Record<string, number>;
  /**
   * Stack outputs (secret ones as `[secret]`): after up, the stack's outputs; in a preview, the values
   * the engine already knows (unknown ones left out).
   */
  outputs: Record<string, unknown>;
  /** Error text (the CLI's) when the operation failed. */
  error?: string;
  /** Diagnostics: `<severity> <resource name or ->: <message>`. */
  diagnostics: string[];
  /** Everything the CLI printed (its human-readable output). */
  output: string;
  durationMs: number;
  /** `up` only: how long the preview it runs first took (ms), program and engine, from the call. */
  previewMs?: number;
}

export interface RunOptions {
  /** Print the CLI's output as it comes. */
  echo?: boolean;
  /** `--parallel`. */
  parallel?: number;
  /** URNs to replace (`--replace`). */
  replace?: string[];
  /** Fail when there are changes (`--expect-no-changes`); with up, before anything runs. */
  expectNoChanges?: boolean;
}

function nameOf(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

/**
 * Runs one operation on the stack and records what the engine reported. `up` previews first and runs
 * nothing when the preview fails, as `pulumi up` does without `--skip-preview` (the steps recorded are
 * then the preview's). Never throws for a failed operation: `ok` is false and `error` holds the CLI's
 * message.
 */
export async function runStack(stack: Stack, mode: Mode, o: RunOptions = {}): Promise<LabRunResult> {
  const started = Date.now();
  const steps: StepRecord[] = [];
  const byKey = new Map<string, StepRecord>();
  const diagnostics: string[] = [];
  let output = "";
  let previewOutputs: Record<string, unknown> = {};
  const onOutput = (s: string): void => {
    output += s;
    if (o.echo) process.stdout.write(s);
  };
  const onEvent = (e: EngineEvent): void => {
    const pre = e.resourcePreEvent?.metadata;
    if (pre && pre.op !== "same" && pre.type !== "pulumi:pulumi:Stack") {
      const replaceKeys = Object.entries(pre.detailedDiff ?? {})
        .filter(([, d]) => String(d.diffKind).endsWith("-replace"))
        .map(([k]) => k);
      const del = pre.old?.inputs?.["delete"];
      const rec: StepRecord = {
        name: nameOf(pre.urn),
        type: pre.type,
        urn: pre.urn,
        op: pre.op,
        diffs: pre.diffs,
        replaceKeys,
        oldDelete: typeof del === "string" ? del !== "" : del !== undefined && del !== null,
        startedAt: e.timestamp,
        seenAt: Date.now() / 1000,
      };
      steps.push(rec);
      byKey.set(`${pre.urn} ${pre.op}`, rec);
    }
    const outs = e.resOutputsEvent?.metadata;
    if (outs && mode !== "preview") {
      const rec = byKey.get(`${outs.urn} ${outs.op}`);
      if (rec) {
        rec.done = true;
        rec.endedAt = e.timestamp;
        rec.seenEndAt = Date.now() / 1000;
      }
    }
    if (outs && mode === "preview" && outs.type === "pulumi:pulumi:Stack") previewOutputs = outs.new?.outputs ?? {};
    const failed = e.resOpFailedEvent?.metadata;
    if (failed) {
      const rec = byKey.get(`${failed.urn} ${failed.op}`);
      if (rec) {
        rec.done = false;
        rec.endedAt = e.timestamp;
        rec.seenEndAt = Date.now() / 1000;
      }
    }
    const d = e.diagnosticEvent;
    // Debug lines are the SDK's own RPC traces, which print resolved values, secrets among them.
    if (d && !d.ephemeral && d.severity !== ("debug" as string)) diagnostics.push(`${d.severity} ${d.urn ? nameOf(d.urn) : "-"}: ${d.message.trimEnd()}`);
  };
  const common = { onOutput, onEvent, color: "never" as const };
  let changes: Record<string, number> = {};
  let outputs: Record<string, unknown> = {};
  let previewMs: number | undefined;
  try {
    if (mode === "preview") {
      const r = await stack.preview({ ...common, parallel: o.parallel, replace: o.replace, expectNoChanges: o.expectNoChanges, diff: true });
      changes = r.changeSummary as Record<string, number>;
      outputs = Object.fromEntries(
        Object.entries(previewOutputs)
          .filter(([, v]) => v !== UNKNOWN)
          .map(([k, v]) => [k, isSecret(v) ? "[secret]" : v]),
      );
    } else if (mode === "up") {
      // As `pulumi up` does (the Automation API's up skips it): a preview first; when it fails, nothing runs.
      const checked = await stack.preview({ ...common, parallel: o.parallel, replace: o.replace, expectNoChanges: o.expectNoChanges });
      void checked;
      previewMs = Date.now() - started;
      steps.length = 0;
      byKey.clear();
      diagnostics.length = 0;
      const r = await stack.up({ ...common, parallel: o.parallel, replace: o.replace, expectNoChanges: o.expectNoChanges });
      changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
      outputs = Object.fromEntries(Object.entries(r.outputs).map(([k, v]) => [k, v.secret ? "[secret]" : v.value]));
    } else if (mode === "destroy") {
      const r = await stack.destroy({ ...common, parallel: o.parallel });
      changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
    } else {
      const r = await stack.refresh({ ...common, parallel: o.parallel });
      changes = (r.summary.resourceChanges ?? {}) as Record<string, number>;
    }
    return { mode, ok: true, steps, changes, outputs, diagnostics, output, durationMs: Date.now() - started, ...(previewMs !== undefined ? { previewMs } : {}) };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return { mode, ok: false, steps, changes, outputs, error, diagnostics, output, durationMs: Date.now() - started };
  }
}
