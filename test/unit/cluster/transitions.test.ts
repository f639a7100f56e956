/**
 * What the component says at preview from its own records: the init node may not move, removed nodes
 * and runtime switches are named, a version step kubeadm refuses is refused.
 */
import { CONTAINERD, CRIO, base, cluster } from "../helpers/smallCluster";
import { checkInitNode, planTransitions } from "../../../components/cluster/transitions";
import { membersOf } from "../../../components/cluster/records";


test("the node that ran kubeadm init removed or moved: refused, saying why and what to do", () => {
  const removed = cluster(base.slice(1));
  expect(() => checkInitNode("prod", removed, "cp-1")).toThrow(
    'nodes: node "cp-1" ran kubeadm init for cluster "prod", but it is no longer in nodes. The plan would run a second kubeadm init on "cp-2" (a new, separate cluster) and reset "cp-1"',
  );
  const moved = cluster([base[1], base[0], base[2], base[3]] as Array<[string, string, string?]>);
  expect(() => checkInitNode("prod", moved, "cp-1")).toThrow('it is no longer the first control-plane node in nodes ("cp-2" is now)');
  expect(() => checkInitNode("prod", moved, "cp-1")).toThrow('Put "cp-1" back as the first control-plane node in nodes');
  // The record is made before init runs: a cluster whose first up stopped before init has a way out.
  expect(() => checkInitNode("prod", moved, "cp-1")).toThrow('if that up stopped before init succeeded on "cp-1", nothing was made there; then pulumi state delete the "prod-init-node" resource');
  // Unchanged, or a new cluster: fine; other nodes may move.
  expect(() => checkInitNode("prod", cluster(base), "cp-1")).not.toThrow();
  expect(() => checkInitNode("prod", cluster([base[0], base[3], base[1]] as Array<[string, string, string?]>), "cp-1")).not.toThrow();
  expect(() => checkInitNode("prod", moved, undefined)).not.toThrow();
});

test("removed nodes and changed sockets are named; unchanged or new nodes are not", () => {
  const last = membersOf(cluster(base, "v1.33.2"));
  const now = cluster([base[0], base[2], ["worker-1b", "worker"], base[3]] as Array<[string, string, string?]>);
  const t = planTransitions(now, last);
  expect(t.fromVersion).toBe("v1.33.2");
  expect(t.warnings).toEqual([
    'node "cp-2" is no longer in nodes: this up will drain it, run kubeadm reset on it (with its CRI socket; this removes its etcd member), then delete its Node object',
  ]);
  const switched = cluster([base[0], base[1], ["worker-1", "worker", CRIO], base[3]] as Array<[string, string, string?]>);
  expect(planTransitions(switched, last).warnings).toEqual([
    `node "worker-1": criSocket ${CONTAINERD} -> ${CRIO}: this up will switch its container runtime in place: cordon and drain it, rewrite its kubelet files (instance-config.yaml and config.yaml), restart and check the kubelet, uncordon it; one node at a time in the rollout line`,
  ]);
  expect(planTransitions(cluster(base), last).warnings).toEqual([]);
  expect(planTransitions(cluster(base), undefined)).toEqual({ warnings: [], byNode: new Map() });
});

test("a removed node that the last up recorded as gone: the warning says nothing runs on the machine (its steps are retained on delete), not that it is drained and reset", () => {
  const last = membersOf(cluster(base, "v1.34.2", undefined, ["worker-1"]));
  expect(last.nodes.map((n) => [n.name, n.gone])).toEqual([["cp-1", undefined], ["cp-2", undefined], ["worker-1", true], ["worker-2", undefined]]);
  const without = cluster(base.filter(([name]) => name !== "worker-1"));
  // Fails on 4d2c386: the warning said "this up will drain it, run kubeadm reset on it", which it does not.
  expect(planTransitions(without, last).warnings).toEqual([
    'node "worker-1" is no longer in nodes: it was marked gone, so this up drops its steps from the state and runs nothing on the machine (no drain, no kubeadm reset; its Node object was deleted when it was marked gone). Unless an up since the last completed one took its gone mark off (the preview refuses that; an up that skips the preview does not check): then this up drains it, runs kubeadm reset on it and deletes its Node object, as for any removed node',
  ]);
  // A record without the mark (no gone node then, or an earlier version of this package) keeps the drain and reset words.
  expect(planTransitions(without, membersOf(cluster(base))).warnings[0]).toContain("this up will drain it, run kubeadm reset on it");
  // A cluster without a gone node records the same members value as before (its record is not updated).
  expect(JSON.stringify(membersOf(cluster(base)))).not.toContain("gone");
  // The mark cannot be taken off while the node stays in nodes (its steps would run on the machine again,
  // and an up that failed after that would leave the record saying gone while a removal resets it).
  expect(() => planTransitions(cluster(base), last)).toThrow(
    'node "worker-1": gone: the last up recorded this node as gone (its Node object deleted, its steps kept without running); its mark cannot be taken off while it stays in nodes. Nothing was changed. To bring its machine back, take its entry out of nodes and pulumi up',
  );
  expect(planTransitions(cluster(base, "v1.34.2", undefined, ["worker-1"]), last).warnings).toEqual([expect.stringContaining('node "worker-1" is marked gone')]);
});

test("a criSocket declared where it was detected, or left to detection where it was declared, is named as a possible runtime switch", () => {
  const last = membersOf(cluster(base));
  // worker-2's socket was detected (containerd there); declaring CRI-O switches it in place, drain included.
  const declared = cluster([base[0], base[1], base[2], ["worker-2", "worker", CRIO]] as Array<[string, string, string?]>);
  const switchWords = "switch its container runtime in place: cordon and drain it, rewrite its kubelet files (instance-config.yaml and config.yaml), restart and check the kubelet, uncordon it; one node at a time in the rollout line";
  expect(planTransitions(declared, last).warnings).toEqual([
    `node "worker-2": criSocket detected on the node -> ${CRIO}: if that is not the endpoint its kubelet uses now, this up will ${switchWords}`,
  ]);
  const undeclared = cluster([base[0], base[1], ["worker-1", "worker"], base[3]] as Array<[string, string, string?]>);
  expect(planTransitions(undeclared, last).warnings).toEqual([
    `node "worker-1": criSocket ${CONTAINERD} -> detected on the node: if that is not the endpoint its kubelet uses now, this up will ${switchWords}`,
  ]);
});

test("a skipped minor or a downgrade from the recorded version is refused", () => {
  expect(() => planTransitions(cluster(base, "v1.35.0"), membersOf(cluster(base, "v1.33.2")))).toThrow(/kubernetesVersion/);
  expect(() => planTransitions(cluster(base, "v1.33.2"), membersOf(cluster(base, "v1.34.2")))).toThrow(/kubernetesVersion/);
});
