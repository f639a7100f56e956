/** The benchmark's result object: what `--json` prints as its last line. */
import type { Calibration } from "./calibrate";
import type { EvalFigures } from "./eval";
import type { NoopFigures } from "./noop";
import type { ProvisionFigures, SessionsPerNode } from "./provision";
import type { UpgradeFigures } from "./upgrade";

export interface BenchResult {
  provision?: ProvisionFigures;
  upgrade?: UpgradeFigures;
  noop?: NoopFigures;
  ssh_sessions_per_node?: SessionsPerNode;
  eval?: EvalFigures;
  /** Context: SSH and stand-in cost of one step on this machine. */
  calibration?: Calibration;
  /** Context: the machine and the code measured. */
  machine?: Record<string, string | number>;
}
