/**
 * node-metadata for real in bash, with a kubectl stub answering the Node's read: with the gate in
 * effect a leftover cri-socket annotation is removed (kubeadm 1.37 no longer touches it); with it off
 * the annotation is set to the node's endpoint; nothing is written when nothing differs.
 */
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { runBash, sandbox } from "./bash";

const CRIO = "unix:///var/run/crio/crio.sock";

/** Runs node-metadata for w1 against a Node whose annotation is `annotation` ("" = none). */
function run(nodeLocalCriSocket: boolean, annotation: string) {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  box.stub("kubectl", `shift 2; echo "$*" >>${calls}; if [ "$1" = get ]; then printf '%s' 'false||${annotation}'; fi`);
  const script = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket, version: "v1.37.0", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" }).create;
  const r = runBash(script, { stdin: `${CRIO}\n`, bin: box.bin, state: box.state });
  const writes = (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []).filter((c) => !c.startsWith("get "));
  return { r, writes };
}

test("gate in effect: a leftover annotation is removed", () => {
  const { r, writes } = run(true, CRIO);
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  expect(writes).toEqual(["annotate --overwrite node w1 kubeadm.alpha.kubernetes.io/cri-socket-"]);
});

test("gate in effect, no annotation: nothing is written", () => {
  expect(run(true, "").writes).toEqual([]);
});

test("gate off: the annotation is set to the node's endpoint", () => {
  expect(run(false, "").writes).toEqual([`annotate --overwrite node w1 kubeadm.alpha.kubernetes.io/cri-socket=${CRIO}`]);
  expect(run(false, CRIO).writes).toEqual([]);
});

// Fails on f4f7d30: kubectl uncordon exits 0 when its patch fails, and the cordon mark was removed from a
// Node left cordoned (from then on an operator's cordon, which this component never uncordons).
test("a Node kubectl uncordon leaves cordoned keeps this component's cordon mark; the step fails, named", () => {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  // The read: unschedulable, no managed labels, no cri-socket annotation, this component's mark; uncordon "succeeds" doing nothing.
  box.stub("kubectl", `shift 2; echo "$*" >>${calls}; case "$1" in get) case "$*" in *annotations*) printf '%s' 'true|||kubelet v1.36.0 -> v1.37.0' ;; *) printf true ;; esac ;; uncordon) echo 'error: unable to uncordon node "w1": conflict' >&2 ;; esac`);
  const script = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.37.0", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" }).create;
  const r = runBash(script, { stdin: "", bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: could not uncordon the node; it keeps this component's cordon mark\n");
  const writes = readFileSync(calls, "utf8").split("\n").filter((c) => c !== "" && !c.startsWith("get "));
  expect(writes).toEqual(["uncordon w1"]);
});
