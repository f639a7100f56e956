/** The benchmark's arithmetic: medians, spreads and ratios of repeated measurements. Pure. */

/** Several runs of one measurement, summarised. */
export interface Summary {
  /** The middle value (the mean of the two middle ones for an even count). */
  median: number;
  min: number;
  max: number;
  /** (max - min) / median, in percent: how far apart the runs were. */
  spread_pct: number;
  /** Every run, in the order measured. */
  runs: number[];
}

/** Rounds to `digits` decimals. */
export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * The median of some numbers.
 * @throws Error on an empty list.
 */
export function median(xs: number[]): number {
  if (xs.length === 0) throw new Error("median of no values");
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Median, range and spread of the runs, rounded to `digits`.
 * @throws Error on an empty list.
 */
export function summarize(runs: number[], digits = 2): Summary {
  const m = median(runs);
  const min = Math.min(...runs);
  const max = Math.max(...runs);
  return {
    median: round(m, digits),
    min: round(min, digits),
    max: round(max, digits),
    spread_pct: m === 0 ? 0 : round(((max - min) / m) * 100, 1),
    runs: runs.map((x) => round(x, digits)),
  };
}

/**
 * One ratio per run (the component's wall time over the floor measured beside it in that run),
 * summarised: pairing by run keeps a busy moment of the machine from landing on one side only.
 * @throws Error when the lists differ in length or are empty, or a floor is not positive.
 */
export function pairedRatios(component: number[], floor: number[]): Summary {
  if (component.length !== floor.length) throw new Error(`ratio: ${component.length} component runs but ${floor.length} floor runs`);
  return summarize(
    component.map((c, i) => {
      const f = floor[i] as number;
      if (!(f > 0)) throw new Error(`ratio: floor of run ${i + 1} is ${f}`);
      return c / f;
    }),
  );
}

/** "12.3 s (11.9-13.0, 9%)": a summary in a table cell. */
export function describe(s: Summary, unit = ""): string {
  return `${s.median}${unit} (${s.min}-${s.max}, ${s.spread_pct}%)`;
}
