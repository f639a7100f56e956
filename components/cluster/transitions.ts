/**
 * What a plan does to the cluster the last `up` left, in words, from the component's own records
 * (records.ts): which nodes it removes (drain, `kubeadm reset`, Node deleted; nothing for a node the
 * record marks gone), which it switches to another container runtime, from which version it upgrades;
 * and the refusal of a plan whose first control-plane node is not the node that ran `kubeadm init`, or
 * that takes the gone mark off a node still in `nodes`.
 */
import { KubeadmConfigError, type ValidCluster } from "../kubeadm/types";
import { checkUpgrade, parseKubernetesVersion } from "../kubeadm/version";
import type { MembersRecord } from "./records";

/** What the plan changes about the nodes of the last `up`. */
export interface Transitions {
  /** The version of the last `up`, when recorded (`v1.33.2`). */
  fromVersion?: string;
  /** One line per destructive or disruptive change, naming the node: shown as warnings at preview and in the plan. */
  warnings: string[];
  /** The same lines by node name (a node removed, switched to another runtime, or marked gone). */
  byNode: Map<string, string>;
}

/** What a runtime switch does, in the words of a warning. */
function switchWords(cluster: ValidCluster): string {
  const files = cluster.nodeLocalCriSocket ? "instance-config.yaml and config.yaml" : "the --container-runtime-endpoint flag and the cri-socket annotation";
  return `switch its container runtime in place: cordon and drain it, rewrite its kubelet files (${files}), restart and check the kubelet, uncordon it; one node at a time in the rollout line`;
}

/**
 * Compare the last `up`'s members with the plan.
 * @param last the members record read back (undefined: a new cluster, or a preview before the first `up` recorded it).
 * @throws KubeadmConfigError (field `kubernetesVersion`) when the step from the recorded version is one
 *   kubeadm refuses (a skipped minor, a downgrade): kubeadm's rule, `checkUpgrade`; (field `gone`, naming
 *   the node) when a node the record marks gone is still in `nodes` without the mark.
 */
export function planTransitions(cluster: ValidCluster, last: MembersRecord | undefined): Transitions {
  const byNode = new Map<string, string>();
  const gone = cluster.nodes
    .filter((n) => n.gone)
    .map((n) => {
      const line = `node "${n.name}" is marked gone: this up deletes its Node object from the first control-plane node and runs nothing on the machine; its steps stay in the state, retained on delete (take the entry out of nodes afterwards to drop them)`;
      byNode.set(n.name, line);
      return line;
    });
  if (last === undefined) return { warnings: gone, byNode };
  const from = parseKubernetesVersion(last.version);
  checkUpgrade(from, cluster.version);
  const now = new Map(cluster.nodes.map((n) => [n.name, n]));
  const warnings: string[] = [];
  for (const old of last.nodes) {
    const n = now.get(old.name);
    if (old.gone === true && n !== undefined && !n.gone) {
      // Its steps would run again on the machine, unfrozen; and an `up` that failed after that would leave
      // the record saying gone while the steps' deletes (drain, kubeadm reset) run on a later removal.
      throw new KubeadmConfigError(
        "gone",
        `the last up recorded this node as gone (its Node object deleted, its steps kept without running); its mark cannot be taken off while it stays in nodes. Nothing was changed. To bring its machine back, take its entry out of nodes and pulumi up (nothing runs on the machine), wipe the machine as README's "A worker whose machine is gone" shows, then add the entry back without gone: it joins as a new node (or, in one edit, add the wiped machine back under a new name).`,
        old.name,
      );
    }
    let line: string | undefined;
    if (n === undefined && old.gone === true) {
      // Its steps were frozen with retainOnDelete when it was marked gone, and stay so unless an up took
      // the mark off (refused above, but only at preview): the line names that case too.
      line = `node "${old.name}" is no longer in nodes: it was marked gone, so this up drops its steps from the state and runs nothing on the machine (no drain, no kubeadm reset; its Node object was deleted when it was marked gone). Unless an up since the last completed one took its gone mark off (the preview refuses that; an up that skips the preview does not check): then this up drains it, runs kubeadm reset on it and deletes its Node object, as for any removed node`;
    } else if (n === undefined) {
      line = `node "${old.name}" is no longer in nodes: this up will drain it, run kubeadm reset on it (with its CRI socket${
        old.role === "control-plane" ? "; this removes its etcd member" : ""
      }), then delete its Node object`;
    } else if (old.criSocket !== undefined && n.criSocket !== undefined && old.criSocket !== n.criSocket) {
      line = `node "${old.name}": criSocket ${old.criSocket} -> ${n.criSocket}: this up will ${switchWords(cluster)}`;
    } else if (old.criSocket !== n.criSocket) {
      // Declared on one side only: whether the endpoint changes is known on the node (the socket the
      // kubelet uses now, or the one detection finds), so the preview names the possibility.
      const detected = "detected on the node";
      line = `node "${old.name}": criSocket ${old.criSocket ?? detected} -> ${n.criSocket ?? detected}: if that is not the endpoint its kubelet uses now, this up will ${switchWords(cluster)}`;
    }
    if (line !== undefined) {
      warnings.push(line);
      byNode.set(old.name, line);
    }
  }
  return { fromVersion: from.text, warnings: [...warnings, ...gone], byNode };
}

/**
 * Refuse a plan whose first control-plane node is not the one that ran `kubeadm init` (recorded in the
 * state when the cluster was first planned): it would run a second `kubeadm init` on another node and
 * reset the init node, which holds the cluster's certificate authority and first etcd member.
 * @param clusterName the component's name, for the message.
 * @param initNode the recorded init node; undefined for a new cluster.
 * @throws KubeadmConfigError (field `nodes`) saying why and what to do instead.
 */
export function checkInitNode(clusterName: string, cluster: ValidCluster, initNode: string | undefined): void {
  const first = cluster.controlPlane[0]?.name;
  if (initNode === undefined || initNode === first) return;
  const where = cluster.nodes.some((n) => n.name === initNode)
    ? `it is no longer the first control-plane node in nodes ("${first}" is now)`
    : "it is no longer in nodes";
  throw new KubeadmConfigError(
    "nodes",
    `node "${initNode}" ran kubeadm init for cluster "${clusterName}", but ${where}. The plan would run a second kubeadm init on "${first}" (a new, separate cluster) and reset "${initNode}", which holds the cluster's certificate authority and first etcd member. Nothing was changed. Put "${initNode}" back as the first control-plane node in nodes; every other node may be added, removed or reordered. Handing the init role to another node is not supported: the first control-plane node stays for the life of the cluster. (The node is recorded at the cluster's first up, before kubeadm init runs: if that up stopped before init succeeded on "${initNode}", nothing was made there; then pulumi state delete the "${clusterName}-init-node" resource (pulumi stack --show-urns lists its URN) and plan again.)`,
  );
}
