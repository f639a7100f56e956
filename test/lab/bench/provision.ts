/**
 * Scenario `provision`: 3 control-plane nodes + 20 workers, fresh, stand-in durations init 4 s, join 2 s,
 * everything else 0. Also yields `ssh_sessions_per_node` (from the nodes' sshd logs) and the stack
 * file the `noop` and `upgrade` scenarios continue from.
 */
import { benchLabUp, nodeNames, setDurations, totalSessions, writeBenchStack, LAB_DIR } from "./lab";
import { provisionBound, provisionBoundWithWindow, ratio, round } from "./bounds";
import { timedApply } from "./apply";
import { CLUSTER } from "./cluster";
import { stepFigures, type StepFigures } from "./steps";
import { stateDependencies } from "./critical";
import { basename, join } from "path";

export { CLUSTER };
export const PROVISION_DURATIONS = { init: 4, join: 2 };
/** The component's default `maxConcurrentJoins` (the bench stack leaves it unset). */
export const DEFAULT_JOIN_WINDOW = 10;

export interface ProvisionFigures {
  wall_s: number;
  bound_s: number;
  ratio: number;
  /** The floor with the component's own worker window (default maxConcurrentJoins 10): ceil(20/10) join waves. */
  bound_with_join_window_s: number;
  resources: number;
  runner_ssh_sessions: number;
  steps: StepFigures;
  timeline: string;
}

export interface SessionsPerNode {
  counted: "Accepted publickey lines in each node's sshd.log (LogLevel VERBOSE)";
  max: number;
  max_node: string;
  mean: number;
  total: number;
  /** `Starting session:` lines, as a cross-check (one per session channel). */
  starting_session_total: number;
  per_node: Record<string, number>;
}

export interface ProvisionOutcome {
  stackFile: string;
  provision: ProvisionFigures;
  sessions: SessionsPerNode;
}

export async function runProvision(say: (l: string) => void): Promise<ProvisionOutcome> {
  const stackFile = writeBenchStack("provision", CLUSTER);
  say(`provision: starting ${CLUSTER.controlPlanes + CLUSTER.workers} nodes in ${LAB_DIR} ...`);
  await benchLabUp(stackFile);
  setDurations(PROVISION_DURATIONS);
  const nodes = nodeNames(CLUSTER);
  const { result, wall, tl, timeline, sshd: counts } = await timedApply(stackFile, "provision", say);
  const perNode = Object.fromEntries(nodes.map((n) => [n, counts[n]?.accepted ?? 0]));
  const values = Object.values(perNode);
  const max = Math.max(...values);
  const bound = provisionBound(CLUSTER, PROVISION_DURATIONS);
  return {
    stackFile,
    provision: {
      wall_s: round(wall),
      bound_s: bound,
      ratio: ratio(wall, bound),
      bound_with_join_window_s: provisionBoundWithWindow(CLUSTER, PROVISION_DURATIONS, DEFAULT_JOIN_WINDOW),
      resources: result.resources.length,
      runner_ssh_sessions: totalSessions(result),
      steps: stepFigures(result, tl, stateDependencies(join(LAB_DIR, "state", `${basename(stackFile, ".yaml").replace(/^Pulumi\./, "")}.json`))),
      timeline,
    },
    sessions: {
      counted: "Accepted publickey lines in each node's sshd.log (LogLevel VERBOSE)",
      max,
      max_node: nodes.find((n) => perNode[n] === max) ?? "",
      mean: round(values.reduce((a, b) => a + b, 0) / values.length),
      total: values.reduce((a, b) => a + b, 0),
      starting_session_total: Object.values(counts).reduce((a, c) => a + c.starting, 0),
      per_node: perNode,
    },
  };
}
