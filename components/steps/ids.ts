/** Step ids: `<node>-<action>`; the resource of a step is named `<cluster>-<step id>`. */

/** `<node>-<action>`. */
export function stepId(node: string, action: string): string {
  return `${node}-${action}`;
}
