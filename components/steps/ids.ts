/** Step ids: `<node>-<action>`; the resource of a step is named `<cluster>-<step id>`. */

/** `<node>-<action>`. */
export function stepId(node: string, action: string): string {
  return `${node}-${action}`;
}

/**
 * A group step's prefix in words: `join wave workers_1`, `rollout batch batch_1` (the plan's `waveId` and
 * `batchId`: `batch_` starts a rollout batch's, anything else is a join wave's).
 */
export function groupWords(group: string): string {
  return `${group.startsWith("batch_") ? "rollout batch" : "join wave"} ${group}`;
}
