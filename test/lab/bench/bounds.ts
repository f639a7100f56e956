/**
 * The floor each scenario cannot beat: the sum of the stand-in's kubeadm durations along the longest
 * chain the rules force, ignoring SSH and script time. Pure arithmetic.
 */

export interface ClusterShape {
  controlPlanes: number;
  workers: number;
}

/** init, then each other control-plane join one after another, then one worker join (workers side by side). */
export function provisionBound(c: ClusterShape, d: { init: number; join: number }): number {
  return d.init + (c.controlPlanes - 1) * d.join + (c.workers > 0 ? d.join : 0);
}

/**
 * The same with the worker join window (`maxConcurrentJoins`): ceil(workers / window) waves of joins.
 * What the component's own rule allows, not only kubeadm's.
 */
export function provisionBoundWithWindow(c: ClusterShape, d: { init: number; join: number }, window: number): number {
  return d.init + (c.controlPlanes - 1) * d.join + Math.ceil(c.workers / window) * d.join;
}

/**
 * `kubeadm upgrade apply` on the first control-plane node, `upgrade node` on each other control-plane
 * node one at a time, then the workers in batches of `maxUnavailable`: drain + upgrade node per batch.
 */
export function upgradeBound(c: ClusterShape, d: { upgradeApply: number; upgradeNode: number; drain: number }, maxUnavailable: number): number {
  return d.upgradeApply + (c.controlPlanes - 1) * d.upgradeNode + Math.ceil(c.workers / maxUnavailable) * (d.drain + d.upgradeNode);
}

export function ratio(wall: number, bound: number): number {
  return round(wall / bound, 2);
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
