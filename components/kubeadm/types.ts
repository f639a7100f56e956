/**
 * Plain data shapes of the kubeadm knowledge layer (layer 1). No Pulumi, no I/O.
 *
 * The component (layer 4) turns its Pulumi args into a {@link ClusterSpec} of plain values (the parts
 * that decide the plan: names, roles, versions, sockets, gates) and hands it to `validateCluster`,
 * which returns a {@link ValidCluster} or throws a {@link KubeadmConfigError}.
 */

/**
 * A node's role, as kubeadm sees it: a control-plane node runs `kubeadm init` (the first one) or `kubeadm
 * join --control-plane`, a worker `kubeadm join`. An enum whose values are the plain strings, so
 * `"control-plane"` and `"worker"` are accepted as written (stack config, other languages, TypeScript).
 * Written as a const object and its value type (an enum form Pulumi's schema inference reads as the
 * enum `NodeRole`): a TypeScript `enum` would refuse the string literals in existing programs.
 */
export const NodeRole = {
  /** Runs the API server and an etcd member; the first in `nodes` runs `kubeadm init`. */
  ControlPlane: "control-plane",
  /** Runs workloads; joins with `kubeadm join`. */
  Worker: "worker",
} as const;
/** `control-plane` or `worker`: see the const `NodeRole`. */
export type NodeRole = (typeof NodeRole)[keyof typeof NodeRole];

/**
 * A taint's effect (core/v1 TaintEffect), the same strings as Kubernetes: `NoSchedule`, `PreferNoSchedule`,
 * `NoExecute`. A const object and its value type, as `NodeRole`.
 */
export const TaintEffect = {
  /** New pods that do not tolerate the taint are not scheduled on the node. */
  NoSchedule: "NoSchedule",
  /** The scheduler tries not to place pods that do not tolerate the taint on the node. */
  PreferNoSchedule: "PreferNoSchedule",
  /** Pods that do not tolerate the taint are evicted, and new ones not scheduled. */
  NoExecute: "NoExecute",
} as const;
/** `NoSchedule`, `PreferNoSchedule` or `NoExecute`: see the const `TaintEffect`. */
export type TaintEffect = (typeof TaintEffect)[keyof typeof TaintEffect];

/** One kubelet flag, kubeadm v1beta4 `nodeRegistration.kubeletExtraArgs` entry: `--<name>=<value>`. */
export interface KubeletArg {
  name: string;
  value: string;
}

/** A Node taint, as in kubeadm's `nodeRegistration.taints` (core/v1 Taint). */
export interface Taint {
  key: string;
  value?: string;
  /** `NoSchedule`, `PreferNoSchedule` or `NoExecute`; checked at run time too (stack config is any JSON). */
  effect: TaintEffect;
}

/** A node as written by the user, before validation. Only plain values. */
export interface NodeSpec {
  name: string;
  /** `control-plane` or `worker`; checked at runtime (no unions in args, see DESIGN.md). */
  role: string;
  /** CRI endpoint; unset = detect on the node as kubeadm does. */
  criSocket?: string;
  kubeletExtraArgs?: KubeletArg[];
  labels?: Record<string, string>;
  taints?: Taint[];
  /**
   * The address SSH dials, when the user gave a plain value (anything else, e.g. an Output, is left
   * to run time: pass undefined, or the value itself when it is not plain data). Checked, and used
   * for the duplicate host+port check.
   */
  host?: unknown;
  /** Whether the user gave a host at all (plain or an Output); `false` refuses the node (`host` is required). */
  hostGiven?: unknown;
  /** SSH port (the node's, else the cluster's SSH default); 22 when unset. A whole number 1..65535. */
  port?: unknown;
  /** SSH user, when plain: a non-empty string, no whitespace or control characters, no leading `-`. */
  user?: unknown;
  /** Pinned SSH host key, when plain: one line `<type> <base64> [comment]`. `null` is refused (present, not a key). */
  hostKey?: unknown;
  /** The bastion (`{host, port?, user?, privateKey?, hostKey?}`), as given; non-plain leaf values are left to run time. */
  proxy?: unknown;
  /** The machine is gone (a worker only): its Node object is deleted without SSH to it. A boolean. */
  gone?: unknown;
  /** This node's kubeadm install command for upgrades, when set: a string ("" = none). */
  kubeadmInstallCommand?: unknown;
  /** This node's kubelet and kubectl install command for upgrades, when set: a string ("" = none). */
  kubeletInstallCommand?: unknown;
}

/** kubeadm ClusterConfiguration.networking. */
export interface Networking {
  podSubnet?: string;
  serviceSubnet?: string;
  dnsDomain?: string;
}

/** The whole cluster as written by the user, before validation. Only plain values. */
export interface ClusterSpec {
  /** `v1.34.2` or `1.34.2`; minors 1.31 to 1.37. */
  kubernetesVersion: string;
  /**
   * Each entry a {@link NodeSpec}. Typed `unknown[]` because stack config is arbitrary JSON: an entry
   * that is not a map (null, a number, a string) is refused naming its index (`nodes[5]: must be a map`).
   */
  nodes: unknown[];
  /** `host` or `host:port` of the API server load balancer (kubeadm controlPlaneEndpoint). */
  controlPlaneEndpoint?: string;
  networking?: Networking;
  /** kubeadm's ClusterConfiguration.featureGates, e.g. `{ NodeLocalCRISocket: true }`. */
  featureGates?: Record<string, boolean>;
  /** Extra top-level KubeletConfiguration fields (never `containerRuntimeEndpoint`: it is per node). */
  kubeletConfiguration?: Record<string, unknown>;
  /** Drain timeout when a node is removed (whole number >= 0). Unchecked type: stack config is arbitrary JSON. */
  drainTimeoutSeconds?: unknown;
  /** Pod grace period for a drain (whole number >= 0). */
  drainGracePeriodSeconds?: unknown;
  /** Workers joining at the same time, at most (whole number >= 1). */
  maxConcurrentJoins?: unknown;
  /** Workers upgraded (drained) at the same time, at most (whole number >= 1). */
  maxUnavailableWorkers?: unknown;
  /** Seconds the kubelet must stay active after a restart (whole number >= 0). */
  kubeletSettleSeconds?: unknown;
  /** Lifetime of each join's bootstrap token: a positive kubeadm duration `XhYmZs` (e.g. `2h0m0s`). */
  joinTokenTtl?: unknown;
  /** The cluster's kubeadm install command for upgrades (a string, "" = none). */
  kubeadmInstallCommand?: unknown;
  /** The cluster's kubelet and kubectl install command for upgrades (a string, "" = none). */
  kubeletInstallCommand?: unknown;
}

/** A parsed Kubernetes version. */
export interface KubeVersion {
  major: number;
  minor: number;
  patch: number;
  /** Canonical text with the `v` prefix: `v1.34.2`. */
  text: string;
}

/** A node after validation: role checked, criSocket normalised, lists defaulted to empty (taints: kept unset when unset). */
export interface ValidNode {
  name: string;
  role: NodeRole;
  /** Normalised endpoint (`unix:///...`), or undefined when it is to be detected on the node. */
  criSocket?: string;
  kubeletExtraArgs: KubeletArg[];
  labels: Record<string, string>;
  /**
   * The node's taints as given; undefined when not given (kubeadm v1beta4: nil means its default, the
   * control-plane NoSchedule taint on a control-plane node), `[]` for none.
   */
  taints?: Taint[];
  /** The machine is gone: nothing runs on it; its Node object is deleted from the first control-plane node. */
  gone: boolean;
  /** Position in the user's list (0-based). */
  index: number;
}

/** A cluster after validation. */
export interface ValidCluster {
  version: KubeVersion;
  nodes: ValidNode[];
  /** Control-plane nodes in the user's order; the first one runs `kubeadm init`. */
  controlPlane: ValidNode[];
  workers: ValidNode[];
  /** Whether NodeLocalCRISocket is in effect for this version and these gates. */
  nodeLocalCriSocket: boolean;
  /** The featureGates map kubeadm is given (keys kubeadm would reject left out). */
  kubeadmFeatureGates: Record<string, boolean>;
  controlPlaneEndpoint?: string;
  networking: Networking;
  kubeletConfiguration: Record<string, unknown>;
  /** Human-readable warnings (kubeadm's own deprecation warnings, among them). */
  warnings: string[];
}

/**
 * Bad input. `node` names the node (absent for cluster-wide fields) and `field` the field path
 * (`criSocket`, `kubeletExtraArgs[2].value`, `featureGates.NodeLocalCRISocket`, ...). The message
 * always starts with `node "<name>": <field>: ` or `<field>: `.
 */
export class KubeadmConfigError extends Error {
  readonly node?: string;
  readonly field: string;
  /** What is wrong, without the node and field prefix. */
  readonly problem: string;
  constructor(field: string, problem: string, node?: string) {
    super(`${node !== undefined ? `node "${node}": ` : ""}${field}: ${problem}`);
    this.name = "KubeadmConfigError";
    this.node = node;
    this.field = field;
    this.problem = problem;
  }
}
