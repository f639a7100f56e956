/**
 * The benchmark's result, what `--json` prints as its last line, made from the repetitions: per
 * scenario the median and spread of the component's wall time, of the floor's beside it, and of their
 * per-run ratio; SSH sessions per node from the nodes' sshd logs; the calibration; evaluation.
 */
import type { Calibration } from "./calibrate";
import type { KubeadmRuns, Repetition, SideRun } from "./cluster";
import type { EvalFigures } from "./eval";
import type { BenchRun } from "./lab";
import type { Machine } from "./machine";
import { KindFigures, TimedSteps, startAndTail, stepKinds, timeline } from "./steps";
import { Summary, pairedRatios, round, summarize } from "./stats";

/** SSH sessions per node in one scenario. */
export interface SessionFigures {
  counted: string;
  per_node: Record<string, number>;
  /** False when some run counted differently (then per_node is the first run's). */
  same_in_every_run: boolean;
  max: number;
  max_node: string;
  min: number;
  total: number;
}

/** A timed scenario: the component beside the floor. */
export interface Compared {
  component_s: Summary;
  floor_s: Summary;
  /** Per run, component / floor. */
  ratio: Summary;
  /** The kubeadm runs each side made (the stand-in's log), first run. */
  kubeadm_runs: { component: KubeadmRuns; floor: KubeadmRuns };
  /** Engine steps per kind over the component's runs. */
  step_kinds: Record<string, KindFigures>;
  /** Median seconds from the `pulumi up` call to the first command, and after the last (+-1 s). */
  before_first_command_s?: number;
  after_last_command_s?: number;
  /** Median seconds the preview that `pulumi up` runs first took (part of `before_first_command_s`). */
  preview_s?: number;
  sessions: { component: SessionFigures; floor: SessionFigures };
  /** The stack's state file after each component run, KB. */
  state_kb: number[];
  /** The component's first run, command by command (see steps.ts `timeline`). */
  timeline_first_run: string[];
  /** Provisioning only: the floor's kubeadm calls as a Pulumi program through the engine (engineFloor.ts). */
  engine_floor?: EngineFloorFigures;
}

/** The floor through the engine beside the floor and the component, run by run. */
export interface EngineFloorFigures {
  wall_s: Summary;
  /** Per run, its time over the floor's: what the engine adds to the same kubeadm calls. */
  over_floor: Summary;
  /** Per run, the component's time over its: what the component adds on the same engine. */
  component_over_it: Summary;
  /** The kubeadm runs it made (the stand-in's log), first run. */
  kubeadm_runs: KubeadmRuns;
  sessions: SessionFigures;
  before_first_command_s?: number;
  after_last_command_s?: number;
  preview_s?: number;
  /** Its Command resources in the first run. */
  commands: number;
  /** The engine's `--parallel` it ran at: the bench's `--parallel`, or the CLI's default. */
  parallel: string;
}

/**
 * One of Pulumi's boolean settings as the engine reads it (sdk/go/common/util/env): its name when that is
 * in the environment at all, else its alternative name; on for `1` or `true` in any case. Returns
 * `<name>=<value>` as read (the name it was read from, the value as set), or undefined when off.
 */
function pulumiSetting(env: NodeJS.ProcessEnv, name: string, alternative?: string): string | undefined {
  const from = name in env ? name : alternative !== undefined && alternative in env ? alternative : undefined;
  if (from === undefined) return undefined;
  const v = env[from] ?? "";
  return v === "1" || v.toLowerCase() === "true" ? `${from}=${v}` : undefined;
}

/**
 * How the engine saved the state in this run, for the JSON's `setup`: `{}` when as by default, else some of
 * - `state_saves: "skipped (PULUMI_SKIP_CHECKPOINTS=true)"`: only the final state saved (not for real use;
 *   figures not comparable with the others);
 * - `state_compression: "zstd (PULUMI_DIY_BACKEND_ZSTD=true)"` or `"gzip (...)"`: the local backend writes
 *   its state file compressed (`state_kb` is then the compressed size; the engine refuses both at once);
 * - `state_backups: "none (...)"`: no copy of the state to `.pulumi/backups` once per update
 *   (`PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS`);
 * - `state_history: "every save also written to a file of its own (...)"`
 *   (`PULUMI_DIY_BACKEND_RETAIN_CHECKPOINTS`: a second whole write per save).
 * Each setting is read as the engine reads it (`pulumiSetting`: the alternative names
 * `PULUMI_SELF_MANAGED_STATE_ZSTD`, `_GZIP`, `PULUMI_DISABLE_CHECKPOINT_BACKUPS` and
 * `PULUMI_RETAIN_CHECKPOINTS` too); the value names the variable and its value as set.
 */
export function stateSetup(env: NodeJS.ProcessEnv): Record<string, string> {
  const skipped = pulumiSetting(env, "PULUMI_SKIP_CHECKPOINTS");
  const zstd = pulumiSetting(env, "PULUMI_DIY_BACKEND_ZSTD", "PULUMI_SELF_MANAGED_STATE_ZSTD");
  const gzip = pulumiSetting(env, "PULUMI_DIY_BACKEND_GZIP", "PULUMI_SELF_MANAGED_STATE_GZIP");
  const noBackups = pulumiSetting(env, "PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS", "PULUMI_DISABLE_CHECKPOINT_BACKUPS");
  const history = pulumiSetting(env, "PULUMI_DIY_BACKEND_RETAIN_CHECKPOINTS", "PULUMI_RETAIN_CHECKPOINTS");
  return {
    ...(skipped !== undefined ? { state_saves: `skipped (${skipped})` } : {}),
    ...(zstd !== undefined ? { state_compression: `zstd (${zstd})` } : gzip !== undefined ? { state_compression: `gzip (${gzip})` } : {}),
    ...(noBackups !== undefined ? { state_backups: `none (${noBackups})` } : {}),
    ...(history !== undefined ? { state_history: `every save also written to a file of its own (${history})` } : {}),
  };
}

/** Everything one bench run measured. */
export interface BenchResult {
  machine: Machine;
  command: string;
  setup: Record<string, unknown>;
  provision?: Compared;
  noop?: { wall_s: Summary; ssh_sessions_total: number[]; commands_run: number[] };
  upgrade?: Array<Compared & { max_unavailable_workers: number; from: string; to: string }>;
  calibration?: {
    /** Sessions of each kind measured, over all repetitions. */
    samples: number;
    ssh_true_s: Summary;
    /** A bare session as the lab's command provider makes it (pulumi-command's Go client's key exchanges). */
    ssh_true_go_client_s: Summary;
    ssh_kubeadm_version_bundle_s: Summary;
    ssh_kubeadm_version_tsx_s: Summary;
    standin_call_bundle_s: number;
    standin_call_tsx_s: number;
  };
  eval?: EvalFigures;
  /** Why the evaluation scenario could not be measured (the cluster figures stand). */
  eval_error?: string;
}

const COUNTED = "Accepted publickey lines in each node's sshd.log (LogLevel VERBOSE), one per SSH connection";

/** Sessions per node over runs of one scenario. */
export function sessionFigures(runs: Array<Record<string, number>>): SessionFigures {
  const first = runs[0] ?? {};
  const entries = Object.entries(first);
  const values = entries.map(([, v]) => v);
  const max = values.length > 0 ? Math.max(...values) : 0;
  return {
    counted: COUNTED,
    per_node: first,
    same_in_every_run: runs.every((r) => JSON.stringify(r) === JSON.stringify(first)),
    max,
    max_node: entries.find(([, v]) => v === max)?.[0] ?? "",
    min: values.length > 0 ? Math.min(...values) : 0,
    total: values.reduce((a, b) => a + b, 0),
  };
}

/** The engine's start and tail over runs (medians, +-1 s), when its timestamps give them; the preview's time when recorded. */
export function engineEdges(runs: Array<SideRun & { run: BenchRun }>): { before_first_command_s?: number; after_last_command_s?: number; preview_s?: number } {
  const edges = runs.map((c) => startAndTail(timedSteps(c))).filter((x) => x !== undefined);
  const previews = runs.map((c) => c.run.engine.previewMs).filter((x) => x !== undefined);
  return {
    ...(edges.length > 0
      ? {
          before_first_command_s: summarize(edges.map((e) => e.before_first_command_s), 1).median,
          after_last_command_s: summarize(edges.map((e) => e.after_last_command_s), 1).median,
        }
      : {}),
    ...(previews.length > 0 ? { preview_s: summarize(previews.map((ms) => ms / 1000), 2).median } : {}),
  };
}

function timedSteps(c: SideRun & { run: BenchRun }): TimedSteps {
  return { steps: c.run.engine.steps, started_epoch_s: c.run.started_epoch_s, wall_s: c.wall_s };
}

function engineFloorFigures(runs: Array<SideRun & { run: BenchRun }>, floor: SideRun[], component: SideRun[], parallel: string): EngineFloorFigures {
  const walls = runs.map((r) => r.wall_s);
  return {
    wall_s: summarize(walls),
    over_floor: pairedRatios(walls, floor.map((f) => f.wall_s)),
    component_over_it: pairedRatios(component.map((c) => c.wall_s), walls),
    kubeadm_runs: runs[0]?.kubeadm ?? {},
    sessions: sessionFigures(runs.map((r) => r.sessions)),
    ...engineEdges(runs),
    commands: runs[0]?.run.commands_run ?? 0,
    parallel,
  };
}

function compare(component: Array<SideRun & { run: BenchRun }>, floor: SideRun[]): Compared {
  const timed: TimedSteps[] = component.map(timedSteps);
  return {
    component_s: summarize(component.map((c) => c.wall_s)),
    floor_s: summarize(floor.map((f) => f.wall_s)),
    ratio: pairedRatios(component.map((c) => c.wall_s), floor.map((f) => f.wall_s)),
    kubeadm_runs: { component: component[0]?.kubeadm ?? {}, floor: floor[0]?.kubeadm ?? {} },
    step_kinds: stepKinds(timed),
    ...engineEdges(component),
    sessions: { component: sessionFigures(component.map((c) => c.sessions)), floor: sessionFigures(floor.map((f) => f.sessions)) },
    state_kb: component.map((c) => c.run.state_kb),
    timeline_first_run: timed[0] ? timeline(timed[0]) : [],
  };
}

/**
 * The cluster scenarios' part of the result, from the repetitions; `parallel` names the engine's
 * `--parallel` they ran at (the bench's option, or the CLI's default).
 */
export function clusterResult(reps: Repetition[], from: string, parallel: string): Pick<BenchResult, "provision" | "noop" | "upgrade" | "calibration"> {
  const out: Pick<BenchResult, "provision" | "noop" | "upgrade" | "calibration"> = {};
  if (reps.length === 0) return out;
  out.provision = compare(reps.map((r) => r.provision.component), reps.map((r) => r.provision.floor));
  const engineFloors = reps.map((r) => r.provision.engineFloor).filter((e) => e !== undefined);
  if (engineFloors.length === reps.length) {
    out.provision.engine_floor = engineFloorFigures(engineFloors, reps.map((r) => r.provision.floor), reps.map((r) => r.provision.component), parallel);
  }
  const noops = reps.map((r) => r.noop).filter((n) => n !== undefined);
  if (noops.length > 0) {
    out.noop = {
      wall_s: summarize(noops.map((n) => n.wall_s)),
      ssh_sessions_total: noops.map((n) => Object.values(n.sessions).reduce((a, b) => a + b, 0)),
      commands_run: noops.map((n) => n.commands_run),
    };
  }
  const first = reps[0] as Repetition;
  if (first.upgrades.length > 0) {
    out.upgrade = first.upgrades.map((u, i) => ({
      max_unavailable_workers: u.maxUnavailableWorkers,
      from: i === 0 ? from : (first.upgrades[i - 1]?.to as string),
      to: u.to,
      ...compare(reps.map((r) => r.upgrades[i]?.component as SideRun & { run: BenchRun }), reps.map((r) => r.upgrades[i]?.floor as SideRun)),
    }));
  }
  const cal: Calibration[] = reps.map((r) => r.calibration);
  // Every sample of every repetition, pooled.
  const t = summarize(cal.flatMap((c) => c.ssh_true_s.runs), 3);
  const b = summarize(cal.flatMap((c) => c.ssh_kubeadm_version_bundle_s.runs), 3);
  const x = summarize(cal.flatMap((c) => c.ssh_kubeadm_version_tsx_s.runs), 3);
  out.calibration = {
    samples: t.runs.length,
    ssh_true_s: t,
    ssh_true_go_client_s: summarize(cal.flatMap((c) => c.ssh_true_go_client_s.runs), 3),
    ssh_kubeadm_version_bundle_s: b,
    ssh_kubeadm_version_tsx_s: x,
    standin_call_bundle_s: round(b.median - t.median, 3),
    standin_call_tsx_s: round(x.median - t.median, 3),
  };
  return out;
}
