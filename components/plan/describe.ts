/**
 * The plan in plain words: the `plan` output of the component, known at preview time.
 */
import type { Step } from "./steps";

/**
 * One line per step, numbered in plan order:
 * `3. cp2 join-token (on cp1, after cp1-init): make fresh join material ...`. Steps marked "once" do
 * nothing on a node where they already ran; the rollout steps do nothing on a node already at the target.
 *
 * @param cluster the component's name; resources are `<cluster>-<step id>`.
 */
export function describePlan(cluster: string, steps: Step[]): string[] {
  return steps.map((s, i) => {
    const where = s.runsOn !== s.node ? `on ${s.runsOn}, ` : "";
    const after = s.after.length > 0 ? `after ${s.after.join(", ")}` : "no dependency";
    return `${i + 1}. ${cluster}-${s.id} (${where}${after}): ${s.summary}`;
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
    for (const a of s.after) {
      if (!seen.has(a)) throw new Error(`plan: step ${s.id} runs after ${a}, which is not an earlier step`);
    }
    seen.add(s.id);
  }
}
