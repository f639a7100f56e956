/**
 * Args that users often have as Outputs (another resource's value, a secret): `controlPlaneEndpoint`,
 * kubelet flag values and the install commands. The plan never depends on them, so the component plans
 * and validates everything else at construction with a placeholder in their place, and renders the
 * scripts and configurations that carry them once their values are known, validating them then.
 * The SSH fields need none of this (pulumi-command takes them as Inputs). What decides the plan (names,
 * roles, versions, sockets, gates, labels, taints, counts) must be plain: an Output there is refused.
 */
import * as pulumi from "@pulumi/pulumi";
import { KubeadmConfigError } from "../kubeadm/types";
import type { ClusterArgs, ClusterNode } from "./args";

/** Whether a value is known only at run time (an Output or a Promise). */
export function isDeferred(value: unknown): boolean {
  return pulumi.Output.isInstance(value) || value instanceof Promise;
}

/** Whether a value is, or holds in its lists and maps, a value known only at run time. */
function holdsDeferred(value: unknown, depth = 0): boolean {
  if (isDeferred(value)) return true;
  if (depth > 32 || value === null || typeof value !== "object") return false;
  return Object.values(value).some((v) => holdsDeferred(v, depth + 1));
}

/** The args with their Output fields: placeholders for planning now, and the values once known. */
export interface DeferredArgs {
  /**
   * The args with each Output field replaced by a placeholder that passes validation
   * (`pending.invalid`, `pending`, `true`): the plan and every plain field are checked with these. Never
   * rendered into anything a node runs: every step's scripts and stdin come from `resolved`.
   */
  placeholders: ClusterArgs;
  /** The args with each Output field's value, once all are known. */
  resolved: pulumi.Output<ClusterArgs>;
}

/** One field that may be an Output: its value, its placeholder, and how to set it in a copy of the args. */
interface Slot {
  value: unknown;
  placeholder: string;
  set(args: ClusterArgs, value: unknown): void;
}

/** A copy of the args deep enough to set any field a Slot names (the nodes and their kubelet flags). */
function copyArgs(args: ClusterArgs): ClusterArgs {
  return {
    ...args,
    nodes: args.nodes.map((n) => ({ ...n, ...(Array.isArray(n.kubeletExtraArgs) ? { kubeletExtraArgs: n.kubeletExtraArgs.map((a) => ({ ...a })) } : {}) })),
  };
}

function slots(args: ClusterArgs): Slot[] {
  const out: Slot[] = [];
  const add = (value: unknown, placeholder: string, set: Slot["set"]) => {
    if (isDeferred(value)) out.push({ value, placeholder, set });
  };
  const installs = ["kubeadmInstallCommand", "kubeletInstallCommand", "installCommand"] as const;
  add(args.controlPlaneEndpoint, "pending.invalid", (a, v) => (a.controlPlaneEndpoint = v as string));
  for (const f of installs) add(args[f], "true", (a, v) => (a[f] = v as string));
  (Array.isArray(args.nodes) ? args.nodes : []).forEach((n: ClusterNode, i) => {
    if (n === null || typeof n !== "object") return;
    for (const f of installs) add(n[f], "true", (a, v) => ((a.nodes[i] as ClusterNode)[f] = v as string));
    (Array.isArray(n.kubeletExtraArgs) ? n.kubeletExtraArgs : []).forEach((x, j) => {
      if (x !== null && typeof x === "object") add(x.value, "pending", (a, v) => (((a.nodes[i] as ClusterNode).kubeletExtraArgs ?? [])[j] = { ...x, value: v as string }));
    });
  });
  return out;
}

/**
 * The args' Output fields (see the file's comment), or undefined when every one is plain.
 * @throws KubeadmConfigError naming the field (and node) when a field that decides the plan is an
 *   Output: see {@link refusePlanOutputs}.
 */
export function deferredArgs(args: ClusterArgs): DeferredArgs | undefined {
  refusePlanOutputs(args);
  const found = slots(args);
  if (found.length === 0) return undefined;
  const placeholders = copyArgs(args);
  for (const s of found) s.set(placeholders, s.placeholder);
  const resolved = pulumi.all(found.map((s) => s.value)).apply((values) => {
    const a = copyArgs(args);
    found.forEach((s, i) => s.set(a, values[i]));
    return a;
  });
  return { placeholders, resolved };
}

const WHOLE = "is one Output as a whole: give a map (a list of maps for nodes) whose SSH fields, and only those, may be Outputs";
const WHY =
  "is an Output (another resource's value or a secret), but it decides the plan (which steps run, on which node, in which order), which the preview shows before anything runs: give it as a plain value";

/**
 * Refuse an Output in a field that decides the plan, naming it: the cluster's version, nodes, gates,
 * networking, kubelet configuration, counts and timeouts; each node's name, role, criSocket, labels,
 * taints, gone, and its kubelet flags' names. Refuse also `nodes`, a node, `ssh` or a `proxy` given as
 * one Output as a whole (its SSH fields could not be read at construction).
 * @throws KubeadmConfigError (field, and node when it is a node's field): "... is an Output ... give it as a plain value".
 */
export function refusePlanOutputs(args: ClusterArgs): void {
  const top = [
    "kubernetesVersion", "networking", "featureGates", "kubeletConfiguration", "maxConcurrentJoins", "kubeletSettleSeconds",
    "joinTokenTtl", "drainTimeoutSeconds", "drainGracePeriodSeconds", "maxUnavailableWorkers", "kubernetesProvider",
  ] as const;
  for (const f of top) if (holdsDeferred(args[f])) throw new KubeadmConfigError(f, WHY);
  for (const f of ["nodes", "ssh"] as const) if (isDeferred(args[f])) throw new KubeadmConfigError(f, WHOLE);
  if (!Array.isArray(args.nodes)) return;
  args.nodes.forEach((n: ClusterNode, i) => {
    if (isDeferred(n)) throw new KubeadmConfigError(`nodes[${i}]`, WHOLE);
    if (n === null || typeof n !== "object") return;
    const node = typeof n.name === "string" ? n.name : undefined;
    for (const f of ["name", "role", "criSocket", "labels", "taints", "gone", "proxy", "kubeletExtraArgs"] as const) {
      const why = f === "proxy" ? WHOLE : WHY;
      const inside = f === "labels" || f === "taints" ? holdsDeferred(n[f]) : isDeferred(n[f]);
      if (inside) throw node !== undefined ? new KubeadmConfigError(f, why, node) : new KubeadmConfigError(`nodes[${i}].${f}`, why);
    }
    (Array.isArray(n.kubeletExtraArgs) ? n.kubeletExtraArgs : []).forEach((x, j) => {
      if (isDeferred(x) || (x !== null && typeof x === "object" && isDeferred(x.name))) throw new KubeadmConfigError(`kubeletExtraArgs[${j}]`, `${WHY} (only the value may be an Output)`, node);
    });
  });
}
