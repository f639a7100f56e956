/**
 * node-metadata for real in bash, with a kubectl stub answering the Node's read: with the gate in
 * effect a leftover cri-socket annotation is removed (kubeadm 1.37 no longer touches it); with it off
 * the annotation is set to the node's endpoint; nothing is written when nothing differs.
 */
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { KUBECTL_STUB_TAG, runBash, sandbox, sandboxed } from "./bash";

const CRIO = "unix:///var/run/crio/crio.sock";

/** Runs node-metadata for w1 against a Node whose annotation is `annotation` ("" = none). */
function run(nodeLocalCriSocket: boolean, annotation: string) {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  box.stub("kubectl", `${KUBECTL_STUB_TAG}\nshift 2; echo "$*" >>${calls}; if [ "$1" = get ]; then tagged w1 false "" '${annotation}' ""; fi`);
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
  box.stub("kubectl", `${KUBECTL_STUB_TAG}\nshift 2; echo "$*" >>${calls}; case "$1" in get) case "$*" in *annotations*) tagged w1 true "" "" 'kubelet v1.36.0 -> v1.37.0' ;; *) printf true ;; esac ;; uncordon) echo 'error: unable to uncordon node "w1": conflict' >&2 ;; esac`);
  const script = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.37.0", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" }).create;
  const r = runBash(script, { stdin: "", bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: could not uncordon the node; it keeps this component's cordon mark\n");
  const writes = readFileSync(calls, "utf8").split("\n").filter((c) => c !== "" && !c.startsWith("get "));
  expect(writes).toEqual(["uncordon w1"]);
});

// The first control-plane node's node-metadata prints the admin kubeconfig as its ONLY stdout (the
// component's secret `kubeconfig` output), whatever kubectl prints on stdout before it.
test("printsAdminKubeconfig: the step's stdout is admin.conf alone, kubectl's output goes to stderr; without the file it fails first, named", () => {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  box.stub("kubectl", `${KUBECTL_STUB_TAG}\nshift 2; echo "$*" >>${calls}; if [ "$1" = get ]; then tagged cp1 false "" '${CRIO}' ""; else echo "node/cp1 annotated"; fi`);
  // A command the script runs without a redirect of its own (the claim's sync) writing on stdout: only
  // the step's redirect keeps it out of the kubeconfig.
  box.stub("sync", `echo synced`);
  const admin = join(box.dir, "admin.conf");
  require("fs").writeFileSync(admin, "apiVersion: v1\nkind: Config\n");
  const input = { node: "cp1", labels: { tier: "a" }, nodeLocalCriSocket: true, version: "v1.37.0", drainTimeoutSeconds: 1, drainOnDelete: false, scope: "cp1-node-metadata", owner: "c-cp1-node-metadata", printsAdminKubeconfig: true };
  const scripts = nodeMetadataScripts(input);
  expect(scripts.delete).toBeUndefined();
  for (const script of [scripts.create, scripts.update as string]) {
    const r = runBash(sandboxed(script, box.dir, (t) => t.split("/etc/kubernetes/admin.conf").join(admin)), { stdin: "", bin: box.bin, state: box.state });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: "apiVersion: v1\nkind: Config\n" });
    expect(r.stderr).toBe(`node/cp1 annotated\nnode/cp1 annotated\n${script === scripts.create ? "synced\n" : ""}`);
  }
  // The file is printed last: a step failing before it (here the claim's sync) prints nothing on stdout,
  // so pulumi-command's error, which quotes stdout and stderr, holds no kubeconfig.
  box.stub("sync", `exit 1`);
  const failed = runBash(sandboxed(scripts.create, box.dir, (t) => t.split("/etc/kubernetes/admin.conf").join(admin)), { stdin: "", bin: box.bin, state: join(box.dir, "fresh-state") });
  expect({ status: failed.status, stdout: failed.stdout }).toEqual({ status: 1, stdout: "" });
  // A node without it (kubeadm init has not run): the step fails before any kubectl call.
  require("fs").rmSync(calls);
  const missing = runBash(sandboxed(scripts.create, box.dir, (t) => t.split("/etc/kubernetes/admin.conf").join(join(box.dir, "none.conf"))), { stdin: "", bin: box.bin, state: box.state });
  expect({ status: missing.status, stdout: missing.stdout, stderr: missing.stderr }).toEqual({ status: 1, stdout: "", stderr: `pulumi-kubeadm: node cp1: no ${join(box.dir, "none.conf")}: kubeadm init has not run\n` });
  expect(existsSync(calls)).toBe(false);
  // Without printsAdminKubeconfig nothing is printed on stdout by the step itself.
  expect(nodeMetadataScripts({ ...input, printsAdminKubeconfig: false }).create).not.toContain("admin.conf >&3");
});
