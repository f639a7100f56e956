/**
 * The cluster scenarios, each repetition on fresh nodes, the component's side and the operator's floor
 * (floor.ts) one after the other on the same lab (which goes first alternates between repetitions, so a
 * busier moment of the machine does not always fall on the same side):
 *
 * - component: `pulumi up` provisioning 3 control-plane nodes + 20 workers at {@link FROM}, a second
 *   `pulumi up` with nothing changed (noop), a bare SSH/stand-in calibration, then one-minor upgrades
 *   with `maxUnavailableWorkers` 1 (to the next minor) and 5 (to the one after);
 * - floor: the operator's provision and the same two upgrades; then, on fresh nodes, the operator's
 *   provision as a Pulumi program through the engine (engineFloor.ts), when provision is measured.
 *
 * Stand-in durations: init 4 s, join 2 s while provisioning; upgrade apply 3 s, upgrade node 2 s,
 * drain 1 s while upgrading; everything else 0; each times `--durations-scale` (default 1).
 */
import { readFileSync } from "fs";
import { join } from "path";
import { BenchCluster, BenchRun, LAB_DIR, Durations, benchLabUp, benchUp, setDurations, setStackConfig, writeBenchStack } from "./lab";
import { provisionFloor, upgradeFloor } from "./floor";
import { engineFloorProgram } from "./engineFloor";
import { Calibration, calibrate } from "./calibrate";
import type { BenchOptions } from "./options";

/** The version provisioned. */
export const FROM = "v1.34.2";
/** The upgrades, in order, each one minor up from the one before. */
export const UPGRADES: ReadonlyArray<{ maxUnavailableWorkers: number; to: string }> = [
  { maxUnavailableWorkers: 1, to: "v1.35.0" },
  { maxUnavailableWorkers: 5, to: "v1.36.0" },
];
/** Stand-in durations while provisioning. */
export const PROVISION_DURATIONS: Durations = { init: 4, join: 2 };
/** Stand-in durations while upgrading. */
export const UPGRADE_DURATIONS: Durations = { upgradeApply: 3, upgradeNode: 2, drain: 1 };
/** `durations` with every value times `scale` (the bench's `--durations-scale`). */
export function scaledDurations(durations: Durations, scale: number): Durations {
  return Object.fromEntries(Object.entries(durations).map(([k, v]) => [k, (v as number) * scale]));
}

/** The stand-in durations a bench run uses, both sides: provisioning's and upgrading's, times `--durations-scale`. */
export function benchDurations(o: Pick<BenchOptions, "durationsScale">): { provision: Durations; upgrade: Durations } {
  return { provision: scaledDurations(PROVISION_DURATIONS, o.durationsScale), upgrade: scaledDurations(UPGRADE_DURATIONS, o.durationsScale) };
}

/** Calibration samples per repetition. */
export const CALIBRATION_SAMPLES = 5;

/** kubeadm runs the stand-in logged (`init`, `join`, `upgrade apply`, `upgrade node`) and how many. */
export type KubeadmRuns = Record<string, number>;

/** A timed run of either side, with the kubeadm work it did (to check both sides did the same). */
export interface SideRun {
  wall_s: number;
  sessions: Record<string, number>;
  kubeadm: KubeadmRuns;
}

/** One repetition's measurements. */
export interface Repetition {
  componentFirst: boolean;
  provision: { component: SideRun & { run: BenchRun }; floor: SideRun; engineFloor?: SideRun & { run: BenchRun } };
  noop?: BenchRun;
  upgrades: Array<{ maxUnavailableWorkers: number; to: string; component: SideRun & { run: BenchRun }; floor: SideRun }>;
  calibration: Calibration;
}

function eventLines(): string[] {
  try {
    return readFileSync(join(LAB_DIR, "cluster", "events.log"), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** Counts `<time> <node> kubeadm <command>` lines by command. */
export function countKubeadmRuns(lines: string[]): KubeadmRuns {
  const out: KubeadmRuns = {};
  for (const l of lines) {
    const cmd = l.split(" ").slice(3).join(" ");
    out[cmd] = (out[cmd] ?? 0) + 1;
  }
  return out;
}

async function withKubeadmRuns<T extends { wall_s: number; sessions: Record<string, number> }>(f: () => Promise<T>): Promise<T & { kubeadm: KubeadmRuns }> {
  const before = eventLines().length;
  const r = await f();
  return { ...r, kubeadm: countKubeadmRuns(eventLines().slice(before)) };
}

function componentRun(stack: string, c: BenchCluster, o: BenchOptions, program?: Parameters<typeof benchUp>[3]): Promise<SideRun & { run: BenchRun }> {
  return withKubeadmRuns(async () => {
    const run = await benchUp(stack, c, o.parallel, program);
    return { wall_s: run.wall_s, sessions: run.sessions, run };
  });
}

interface ComponentSide {
  provision: SideRun & { run: BenchRun };
  noop?: BenchRun;
  calibration: Calibration;
  upgrades: Array<SideRun & { run: BenchRun }>;
}

interface FloorSide {
  provision: SideRun;
  upgrades: SideRun[];
  engineFloor?: SideRun & { run: BenchRun };
}

/** One repetition (index from 0) of the cluster scenarios the options ask for. */
export async function runRepetition(index: number, c: BenchCluster, o: BenchOptions, say: (l: string) => void): Promise<Repetition> {
  const upgrades = o.only.includes("upgrade") ? UPGRADES : [];
  const { provision: provisionDurations, upgrade: upgradeDurations } = benchDurations(o);
  const say1 = (l: string) => say(`run ${index + 1}: ${l}`);
  // New nodes at FROM, no stack state; returns the stack file (at FROM: upgrades change it).
  const fresh = async (side: string): Promise<string> => {
    say1(`${side}: starting ${c.controlPlanes + c.workers} nodes ...`);
    const stack = writeBenchStack("bench", c, FROM, o.joins !== undefined ? { "kubeadm:maxConcurrentJoins": o.joins } : {});
    await benchLabUp(stack, provisionDurations, o.standin);
    return stack;
  };

  const component = async (): Promise<ComponentSide> => {
    const stack = await fresh("component");
    say1(`component: pulumi up (provision ${FROM}) ...`);
    const provision = await componentRun(stack, c, o);
    let noop: BenchRun | undefined;
    if (o.only.includes("noop")) {
      say1("component: pulumi up (nothing changed) ...");
      noop = await benchUp(stack, c, o.parallel);
    }
    say1("calibration ...");
    const calibration = await calibrate("cp-1", CALIBRATION_SAMPLES);
    setDurations(upgradeDurations);
    const ups: ComponentSide["upgrades"] = [];
    // The stack's maxUnavailableWorkers (unset: the default, 1).
    let window = 1;
    for (const u of upgrades) {
      if (u.maxUnavailableWorkers !== window) {
        // A new maxUnavailableWorkers alone regroups the workers' rollout batches (their steps replaced),
        // once; an upgrade at a setting the stack already has, as a user's next upgrade is, does not pay
        // it. Run first, untimed in the figures (its time is said).
        setStackConfig(stack, { "kubeadm:maxUnavailableWorkers": u.maxUnavailableWorkers });
        const regroup = await benchUp(stack, c, o.parallel);
        say1(`component: pulumi up (maxUnavailableWorkers ${window} -> ${u.maxUnavailableWorkers} alone, batches regrouped; not in the figures): ${regroup.wall_s.toFixed(1)} s, ${regroup.sessions["cp-1"] ?? 0} sessions on cp-1`);
        window = u.maxUnavailableWorkers;
      }
      say1(`component: pulumi up (upgrade to ${u.to}, maxUnavailableWorkers ${u.maxUnavailableWorkers}) ...`);
      setStackConfig(stack, { "kubeadm:kubernetesVersion": u.to, "kubeadm:maxUnavailableWorkers": u.maxUnavailableWorkers });
      ups.push(await componentRun(stack, c, o));
    }
    return { provision, noop, calibration, upgrades: ups };
  };
  const floor = async (): Promise<FloorSide> => {
    await fresh("floor");
    say1(`floor: provision ${FROM} ...`);
    const provision = await withKubeadmRuns(() => provisionFloor(c, FROM));
    setDurations(upgradeDurations);
    const ups: SideRun[] = [];
    for (const u of upgrades) {
      say1(`floor: upgrade to ${u.to}, ${u.maxUnavailableWorkers} worker(s) at a time ...`);
      ups.push(await withKubeadmRuns(() => upgradeFloor(c, u.to, u.maxUnavailableWorkers)));
    }
    if (!o.only.includes("provision")) return { provision, upgrades: ups };
    const stack = await fresh("engine floor");
    say1(`engine floor: pulumi up of the floor's provision ${FROM} as ${c.controlPlanes + c.workers} Commands ...`);
    return { provision, upgrades: ups, engineFloor: await componentRun(stack, c, o, engineFloorProgram(c, FROM)) };
  };

  const componentFirst = index % 2 === 0;
  let comp: ComponentSide;
  let flo: FloorSide;
  if (componentFirst) {
    comp = await component();
    flo = await floor();
  } else {
    flo = await floor();
    comp = await component();
  }
  return {
    componentFirst,
    provision: { component: comp.provision, floor: flo.provision, ...(flo.engineFloor !== undefined ? { engineFloor: flo.engineFloor } : {}) },
    noop: comp.noop,
    calibration: comp.calibration,
    upgrades: upgrades.map((u, i) => ({ ...u, component: comp.upgrades[i] as SideRun & { run: BenchRun }, floor: flo.upgrades[i] as SideRun })),
  };
}
