/**
 * The plan in plain words: the `plan` output of the component, known at preview time.
 */
import { lineSteps, readyStep, type LineWait, type Step } from "./steps";

/** The rollout line's waits in words: what each node's prepare report decides. */
function lineWords(line: LineWait | undefined): string[] {
  if (line === undefined) return [];
  const words = [
    ...(line.ready ?? []).map((n) => `after ${readyStep(line, n)} if ${n.node} had joined before this run, else after ${n.joining}`),
    ...(line.existing !== undefined ? [`if ${line.existing.ifAnyJoined.join(" or ")} had joined before this run: after ${line.existing.after.join(", ")}`] : []),
  ];
  return line.ifJoined !== undefined ? words.map((w) => `if ${line.ifJoined} had joined before this run: ${w}`) : words;
}

/**
 * One line per step, numbered in plan order:
 * `3. cp2 join-token (on cp1, after cp1-init): make fresh join material ...`. Steps marked "once" do
 * nothing on a node where they already ran; the rollout steps do nothing on a node already at the target.
 *
 * @param cluster the component's name; resources are `<cluster>-<step id>`.
 */
export function describePlan(cluster: string, steps: Step[]): string[] {
  return steps.map((s, i) => {
    // A join wave's or rollout batch's steps are the cluster's: they name the node they run on too.
    const where = s.runsOn !== s.node || s.members !== undefined ? `on ${s.runsOn}, ` : "";
    const waits = [...(s.after.length > 0 ? [`after ${s.after.join(", ")}`] : []), ...lineWords(s.line)];
    return `${i + 1}. ${cluster}-${s.id} (${where}${waits.length > 0 ? waits.join("; ") : "no dependency"}): ${s.summary}`;
  });
}

/**
 * Checks that every `after` names an earlier step and ids are unique.
 *
 * @throws Error naming the offending step.
 */
export function checkPlanOrder(steps: Step[]): void {
  const seen = new Set<string>();
  for (const s of steps) {
    if (seen.has(s.id)) throw new Error(`plan: step ${s.id} appears twice`);
    for (const a of [...s.after, ...(s.line !== undefined ? lineSteps(s.line) : [])]) {
      if (!seen.has(a)) throw new Error(`plan: step ${s.id} runs after ${a}, which is not an earlier step`);
    }
    seen.add(s.id);
  }
}
