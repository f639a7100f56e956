/**
 * The worker window held in the cluster too: a rollout batch's drain waits while the Nodes other than its
 * members that carry this component's cordon mark, plus the members it drains, exceed
 * `maxUnavailableWorkers`, and fails naming those Nodes, changing nothing, when they stay.
 */
import { drainScripts } from "../../../components/steps/drain";
import { runBash } from "./bash";
import { CORDONED, nodesStub } from "./nodesStub";

const WHY = "kubelet v1.33.2 -> v1.34.2";
const BOTH = `drain - ${WHY}\ndrain - ${WHY}\n`;
const drainOf = (m: string, timeout: number) => `drain ${m} --ignore-daemonsets --delete-emptydir-data --timeout=${timeout}s`;
/** The batch w3 and w4's drain; `get nodes` answers `lists` (w3 carries a mark of an earlier run). */
function batch(lists: string[], size: number, timeoutSeconds: number, stdin = BOTH) {
  const c = nodesStub({ w3: { mark: "earlier run" }, w4: {} }, { lists });
  const r = runBash(drainScripts({ members: ["w3", "w4"], timeoutSeconds, maxUnavailable: size }).create, { stdin, bin: c.box.bin, state: c.box.state });
  return { c, r };
}

test("a batch's drain with the window full fails naming the other cordoned Nodes and changes nothing; its members' own marks and unmarked Nodes do not count", () => {
  const full = batch([`cp1|\\nw1|${WHY}\\nw3|earlier run\\nw4|\\n`], 2, 0);
  expect(full.r.status).toBe(1);
  expect(full.r.stderr).toBe("pulumi-kubeadm: node w3 and w4: maxUnavailableWorkers (2) reached: w1 still cordoned by this component; nothing was changed on w3 w4\n");
  expect(full.c.writes()).toEqual([]);
  // w1 uncordoned: the two members fill the window (w3's own mark does not count), the drains go ahead.
  const room = batch([`cp1|\\nw1|\\nw3|earlier run\\nw4|\\n`], 2, 0);
  expect(room.r.status).toBe(0);
  expect(room.c.writes().slice(0, 2)).toEqual([`annotate --overwrite node w3 ${CORDONED}=${WHY}`, `annotate --overwrite node w4 ${CORDONED}=${WHY}`]);
  expect(room.c.writes().slice(2).sort()).toEqual([drainOf("w3", 0), drainOf("w4", 0)]);
  // Only the members it drains count: with w4 kept, w1's mark and w3 fill the window of 2.
  const kept = batch([`w1|${WHY}\\nw3|earlier run\\n`], 2, 0, `drain - ${WHY}\nkeep - kubelet at v1.34.2, runtime unchanged\n`);
  expect(kept.r.status).toBe(0);
  expect(kept.c.writes()).toEqual([`annotate --overwrite node w3 ${CORDONED}=${WHY}`, drainOf("w3", 0)]);
});

test("a batch's drain waits for room: it cordons once another Node's mark is gone", () => {
  const { c, r } = batch([`w1|${WHY}\\n`, "w1|\\n"], 2, 30);
  expect(r.status).toBe(0);
  expect(c.lookups()).toBe(2);
  expect(c.writes().slice(0, 2)).toEqual([`annotate --overwrite node w3 ${CORDONED}=${WHY}`, `annotate --overwrite node w4 ${CORDONED}=${WHY}`]);
  expect(c.writes().slice(2).sort()).toEqual([drainOf("w3", 30), drainOf("w4", 30)]);
});

test("a control-plane node's drain (no window) and a batch whose members all keep look at no other Node", () => {
  const cp = nodesStub({ cp2: {} }, { lists: [`w1|x\\nw2|y\\n`] });
  expect(runBash(drainScripts({ members: ["cp2"], timeoutSeconds: 0 }).create, { stdin: "drain - container runtime a -> b\n", bin: cp.box.bin, state: cp.box.state }).status).toBe(0);
  expect(cp.lookups()).toBe(0);
  expect(cp.writes()).toEqual([`annotate --overwrite node cp2 ${CORDONED}=container runtime a -> b`, drainOf("cp2", 0)]);
  const keep = batch([`w1|x\\n`], 1, 0, "keep - kubelet at v1.34.2\nkeep - kubelet at v1.34.2\n");
  expect(keep.r.status).toBe(0);
  expect(keep.r.stdout).toBe("w3: no drain: kubelet at v1.34.2\nw4: no drain: kubelet at v1.34.2\n");
  expect(keep.c.lookups()).toBe(0);
});
