/**
 * The worker window held in the cluster too: a rollout batch's drain waits while a node of the batch
 * ahead carries this component's cordon mark, and fails naming it, changing nothing, when it stays. Marks
 * on other Nodes (a later batch's member a failed run left cordoned, a node taken out of the stack) never
 * hold it up: they could not clear while it waits (fails on 5a067a7, which counted every other mark
 * against maxUnavailableWorkers, so a smaller window after a failed rollout never finished).
 */
import { drainScripts } from "../../../components/steps/drain";
import { runBash } from "./bash";
import { CORDONED, nodesStub } from "./nodesStub";

const WHY = "kubelet v1.33.2 -> v1.34.2";
const BOTH = `drain - ${WHY}\ndrain - ${WHY}\n`;
const drainOf = (m: string, timeout: number) => `drain ${m} --ignore-daemonsets --delete-emptydir-data --timeout=${timeout}s`;
/** The batch w3 and w4's drain, the batch ahead w1 and w2; `get nodes` answers `lists` (w3 carries a mark of an earlier run). */
function batch(lists: string[], timeoutSeconds: number, stdin = BOTH) {
  const c = nodesStub({ w3: { mark: "earlier run" }, w4: {} }, { lists });
  const r = runBash(drainScripts({ members: ["w3", "w4"], timeoutSeconds, window: { ahead: ["w1", "w2"], size: 2 } }).create, { stdin, bin: c.box.bin, state: c.box.state });
  return { c, r };
}

test("a batch's drain with a node of the batch ahead still marked fails naming it and changes nothing", () => {
  const full = batch([`cp1|\\nw1|\\nw2|${WHY}\\nw3|earlier run\\nw4|\\n`], 0);
  expect(full.r.status).toBe(1);
  expect(full.r.stderr).toBe("pulumi-kubeadm: node w3 and w4: maxUnavailableWorkers (2): w2 (ahead in the rollout) still cordoned by this component; nothing was changed on w3 w4\n");
  expect(full.c.writes()).toEqual([]);
});

test("marks outside the batch ahead do not hold a batch's drain up: a later worker's and a removed node's, left by a failed run", () => {
  // w5 (a later batch's member since the window shrank) and w9 (taken out of the stack) stay marked until
  // after this step: counting them would fail every re-run. The members' own marks do not count either.
  const { c, r } = batch([`cp1|\\nw1|\\nw2|\\nw3|earlier run\\nw4|\\nw5|${WHY}\\nw9|${WHY}\\n`], 0);
  expect(r.status).toBe(0);
  expect(c.lookups()).toBe(1);
  expect(c.writes().slice(0, 1)).toEqual([`annotate --overwrite node w3 w4 ${CORDONED}=${WHY}`]);
  expect(c.writes().slice(1).sort()).toEqual([drainOf("w3", 0), drainOf("w4", 0)]);
});

test("a batch's drain waits for the batch ahead: it cordons once that batch's marks are gone", () => {
  const { c, r } = batch([`w1|${WHY}\\nw5|${WHY}\\n`, `w1|\\nw5|${WHY}\\n`], 30);
  expect(r.status).toBe(0);
  expect(c.lookups()).toBe(2);
  expect(c.writes().slice(0, 1)).toEqual([`annotate --overwrite node w3 w4 ${CORDONED}=${WHY}`]);
  expect(c.writes().slice(1).sort()).toEqual([drainOf("w3", 30), drainOf("w4", 30)]);
});

test("a control-plane node's drain (no window) and a batch whose members all keep look at no other Node", () => {
  const cp = nodesStub({ cp2: {} }, { lists: [`w1|x\\nw2|y\\n`] });
  expect(runBash(drainScripts({ members: ["cp2"], timeoutSeconds: 0 }).create, { stdin: "drain - container runtime a -> b\n", bin: cp.box.bin, state: cp.box.state }).status).toBe(0);
  expect(cp.lookups()).toBe(0);
  expect(cp.writes()).toEqual([`annotate --overwrite node cp2 ${CORDONED}=container runtime a -> b`, drainOf("cp2", 0)]);
  const keep = batch([`w1|x\\n`], 0, "keep - kubelet at v1.34.2\nkeep - kubelet at v1.34.2\n");
  expect(keep.r.status).toBe(0);
  expect(keep.r.stdout).toBe("w3: no drain: kubelet at v1.34.2\nw4: no drain: kubelet at v1.34.2\n");
  expect(keep.c.lookups()).toBe(0);
});
