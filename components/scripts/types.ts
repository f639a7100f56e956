/** The scripts of one step, before they are wrapped into command text (`remoteCommand`). */
export interface StepScripts {
  /** Runs when the resource is created (and on update when `update` is unset). */
  create: string;
  /** Runs when an input changes. */
  update?: string;
  /** Runs when the resource is deleted (destroy, or the node removed from the cluster). */
  delete?: string;
}
