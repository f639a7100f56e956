/** Plain words several step kinds use in their plan lines. */
import type { ValidCluster } from "../kubeadm/types";

/** `NodeLocalCRISocket in effect` or `... not in effect`. */
export function gateWords(cluster: ValidCluster): string {
  return cluster.nodeLocalCriSocket ? "NodeLocalCRISocket in effect" : "NodeLocalCRISocket not in effect";
}

/** The gate's state and what it means for a node's files and its Node object. */
export function modeWords(cluster: ValidCluster): string {
  return cluster.nodeLocalCriSocket
    ? `${gateWords(cluster)}: instance-config.yaml, no --container-runtime-endpoint flag, no cri-socket annotation`
    : `${gateWords(cluster)}: --container-runtime-endpoint flag and cri-socket annotation, no instance-config.yaml`;
}

/** The members of a join wave or rollout batch in words: `w1, w2 and w3`. */
export function membersWords(members: string[]): string {
  return members.length <= 1 ? (members[0] ?? "") : `${members.slice(0, -1).join(", ")} and ${members[members.length - 1]}`;
}
