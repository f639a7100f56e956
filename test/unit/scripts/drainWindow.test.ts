/**
 * The worker window held in the cluster too: a worker's drain waits while `maxUnavailableWorkers` other
 * Nodes carry this component's cordon mark, and fails naming them, changing nothing, when they stay.
 */
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { drainScripts } from "../../../components/steps/drain";
import { runBash, sandbox } from "./bash";

const CORDONED = "kubeadm.pulumi.com/cordoned";

/**
 * A kubectl stub: `get nodes` lists `lists[i]` on its i-th call (the last one from then on), `get node w3`
 * says schedulable and unmarked; every other call is recorded as a write.
 */
function cluster(lists: string[]) {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  const n = join(box.dir, "n");
  const cases = lists.map((l, i) => `${i}) printf '%b' ${JSON.stringify(l)} ;;`).join(" ");
  box.stub(
    "kubectl",
    `shift 2; echo "$*" >>${calls}
if [ "$1 $2" = "get nodes" ]; then i=$(cat ${n} 2>/dev/null || echo 0); echo $((i + 1)) >${n}; [ "$i" -lt ${lists.length} ] || i=${lists.length - 1}; case $i in ${cases} esac; exit 0; fi
if [ "$1" = get ]; then printf 'false|'; fi`,
  );
  const writes = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []).filter((c) => !c.startsWith("get "));
  const lookups = () => (existsSync(n) ? Number(readFileSync(n, "utf8")) : 0);
  return { box, writes, lookups };
}

const DRAIN = "drain w3 --ignore-daemonsets --delete-emptydir-data --timeout=0s";

test("a worker's drain with the window full fails naming the cordoned Nodes and changes nothing; its own mark and unmarked Nodes do not count", () => {
  const script = drainScripts({ node: "w3", timeoutSeconds: 0, maxUnavailable: 2 }).create;
  const full = cluster(["cp1|\\nw1|kubelet v1.33.2 -> v1.34.2\\nw2|kubelet v1.33.2 -> v1.34.2\\nw3|earlier run\\nw4|\\n"]);
  const r = runBash(script, { stdin: "drain - kubelet v1.33.2 -> v1.34.2\n", bin: full.box.bin, state: full.box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("pulumi-kubeadm: node w3: maxUnavailableWorkers (2) reached: w1 w2 still cordoned by this component; nothing was changed on this node");
  expect(full.writes()).toEqual([]);
  // One slot free (w2 uncordoned): the drain goes ahead.
  const room = cluster(["w1|kubelet v1.33.2 -> v1.34.2\\nw2|\\nw3|earlier run\\n"]);
  expect(runBash(script, { stdin: "drain - kubelet v1.33.2 -> v1.34.2\n", bin: room.box.bin, state: room.box.state }).status).toBe(0);
  expect(room.writes()).toEqual([`annotate --overwrite node w3 ${CORDONED}=kubelet v1.33.2 -> v1.34.2`, DRAIN]);
});

test("a worker's drain waits for a slot: it cordons once another Node's mark is gone", () => {
  const script = drainScripts({ node: "w3", timeoutSeconds: 30, maxUnavailable: 1 }).create;
  const c = cluster(["w1|kubelet v1.33.2 -> v1.34.2\\n", "w1|\\n"]);
  const r = runBash(script, { stdin: "drain - kubelet v1.33.2 -> v1.34.2\n", bin: c.box.bin, state: c.box.state });
  expect(r.status).toBe(0);
  expect(c.lookups()).toBe(2);
  expect(c.writes()).toEqual([`annotate --overwrite node w3 ${CORDONED}=kubelet v1.33.2 -> v1.34.2`, DRAIN.replace("=0s", "=30s")]);
});

test("a control-plane node's drain (no window) and a keep verdict look at no other Node", () => {
  const cp = cluster(["w1|x\\nw2|y\\n"]);
  expect(runBash(drainScripts({ node: "w3", timeoutSeconds: 0 }).create, { stdin: "drain - container runtime a -> b\n", bin: cp.box.bin, state: cp.box.state }).status).toBe(0);
  expect(cp.lookups()).toBe(0);
  const keep = cluster(["w1|x\\n"]);
  expect(runBash(drainScripts({ node: "w3", timeoutSeconds: 0, maxUnavailable: 1 }).create, { stdin: "keep - kubelet at v1.34.2\n", bin: keep.box.bin, state: keep.box.state }).status).toBe(0);
  expect(keep.lookups()).toBe(0);
});
