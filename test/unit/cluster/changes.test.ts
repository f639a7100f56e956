/**
 * The `plan` output: what this run changes, node by node in rollout order, from the component's record
 * of the last `up`; "nothing to change" when the record matches.
 */
import { CRIO, base, cluster } from "../helpers/smallCluster";
import { buildPlan } from "../../../components/plan/steps";
import { planTransitions } from "../../../components/cluster/transitions";
import { membersOf, type MembersRecord } from "../../../components/cluster/records";
import { describeChanges } from "../../../components/cluster/changes";

/** The plan output of `now` after an up that recorded `last`. */
function changes(now: ReturnType<typeof cluster>, last: MembersRecord | undefined): string[] {
  return describeChanges("prod", now, buildPlan(now), last, planTransitions(now, last), { maxConcurrentJoins: 3, maxUnavailableWorkers: 2 });
}

test("a new cluster: one line per node, init first, then the control plane, then the workers; nothing about steps that do nothing", () => {
  expect(changes(cluster(base), undefined)).toEqual([
    'node "cp-1" (control-plane): kubeadm init v1.34.2 (NodeLocalCRISocket in effect: instance-config.yaml, no --container-runtime-endpoint flag, no cri-socket annotation), then its kubelet files and labels',
    'node "cp-2" (control-plane): kubeadm join --control-plane v1.34.2, one control-plane node at a time, then its kubelet files and labels',
    'node "worker-1" (worker): kubeadm join v1.34.2 (at most 3 workers at once), then its kubelet files and labels',
    'node "worker-2" (worker): kubeadm join v1.34.2 (at most 3 workers at once), then its kubelet files and labels',
  ]);
});

test("a run that changes nothing says so, and names no kubeadm init", () => {
  const lines = changes(cluster(base), membersOf(cluster(base)));
  expect(lines).toEqual(['nothing to change: cluster "prod" is as the last up recorded it (v1.34.2, 4 nodes); every step still checks its node and changes nothing already as asked']);
});

test("an upgrade with a worker added and one removed: kubeadm's order node by node, the new worker joins, the removal last", () => {
  const now = cluster([...base.slice(0, 3), ["worker-3", "worker"]], "v1.35.0");
  const lines = changes(now, membersOf(cluster(base, "v1.34.2")));
  expect(lines).toEqual([
    'node "cp-1" (control-plane): kubeadm upgrade apply v1.35.0 (from v1.34.2; the kubeadm package first), drained, the kubelet and kubectl packages, kubelet restarted and checked, uncordoned',
    'node "cp-2" (control-plane): kubeadm upgrade node to v1.35.0 (from v1.34.2; the kubeadm package first), drained, the kubelet and kubectl packages, kubelet restarted and checked, uncordoned (one control-plane node at a time)',
    'node "worker-1" (worker): kubeadm upgrade node to v1.35.0 (from v1.34.2; the kubeadm package first), drained, the kubelet and kubectl packages, kubelet restarted and checked, uncordoned (at most 2 workers at once)',
    'node "worker-3" (worker): kubeadm join v1.35.0 (at most 3 workers at once), then its kubelet files and labels',
    'node "worker-2" is no longer in nodes: this up will drain it, run kubeadm reset on it (with its CRI socket), then delete its Node object',
  ]);
});

test("a runtime switch names only that node; a gate toggle names every node's kubelet files", () => {
  const switched = changes(cluster([base[0]!, base[1]!, ["worker-1", "worker", CRIO], base[3]!]), membersOf(cluster(base)));
  expect(switched).toEqual([expect.stringMatching(/^node "worker-1": criSocket unix:\/\/\/run\/containerd\/containerd\.sock -> unix:\/\/\/var\/run\/crio\/crio\.sock: this up will switch its container runtime in place: cordon and drain it/)]);
  const toggled = changes(cluster(base, "v1.34.2", { NodeLocalCRISocket: false }), membersOf(cluster(base)));
  expect(toggled).toEqual(base.map(([name, role]) => `node "${name}" (${role}): kubelet files rewritten: NodeLocalCRISocket not in effect: --container-runtime-endpoint flag and cri-socket annotation, no instance-config.yaml`));
});
