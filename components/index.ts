/**
 * pulumi-kubeadm: the `Cluster` component and the kubeadm knowledge it is built on (pure functions,
 * usable on their own).
 */
export { Cluster, type NodeStatus } from "./cluster/cluster";
export type { ClusterArgs, ClusterNode, KubeletExtraArg, SshProxy, SshDefaults, NodeArgs, ProxyArgs } from "./cluster/args";
export * from "./kubeadm";
export { buildPlan, type Step, type StepAction, type PlanOptions } from "./plan/steps";
export { describePlan } from "./plan/describe";
export { DEFAULT_KUBEADM_INSTALL_COMMAND, DEFAULT_KUBELET_INSTALL_COMMAND } from "./scripts/install";
