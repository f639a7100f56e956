/**
 * A node's rollout unit in kubeadm's order, decided on the node: the drain decision from what the node
 * reported (a new kubelet version, a runtime switch), the cordon this component makes and undoes (never
 * an operator's), the kubelet installed after kubeadm and restarted with its files, and kubeadm's version
 * rules checked on each node before anything changes.
 */
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { drainScripts, drainVerdict } from "../../../components/steps/drain";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { upgradeScripts } from "../../../components/steps/upgrade";
import { renderScript } from "../../../components/scripts/script";
import { kubeadmFiles, snapshotOf } from "../helpers/kubeadmFiles";
import { KUBECTL_STUB_TAG, runBash, sandbox, sandboxed, kubeletScript } from "./bash";

const CONTAINERD = "unix:///run/containerd/containerd.sock";
const CRIO = "unix:///var/run/crio/crio.sock";
const CORDONED = "kubeadm.pulumi.com/cordoned";

test("drain decision: any node's new kubelet version, any node's runtime switch; nothing else", () => {
  const id = "0b6f3d1e-7c4a-4f8e-9d2b-5a1c3e7f9b20";
  const report = (version: string, endpoint: string) => `report=${id}\nnodeVersion=${version}\n${snapshotOf(kubeadmFiles(true, endpoint))}`;
  // Any node whose kubelet changes version: kubeadm's upgrade guide drains control-plane nodes before
  // their kubelet too (CoreDNS, or any workload with taints: []), not only workers.
  expect(drainVerdict(report("v1.33.2", CONTAINERD), "v1.34.2", CONTAINERD)).toBe(`drain ${id} kubelet v1.33.2 -> v1.34.2\n`);
  expect(drainVerdict(report("v1.34.2", CONTAINERD), "v1.34.2", CONTAINERD)).toBe(`keep ${id} kubelet at v1.34.2, runtime unchanged\n`);
  expect(drainVerdict(report("v1.34.2", CONTAINERD), "v1.34.2", CRIO)).toBe(`drain ${id} container runtime ${CONTAINERD} -> ${CRIO}\n`);
  // Legacy files: the flag says which runtime the kubelet uses.
  const legacy = `nodeVersion=v1.34.2\n${snapshotOf(kubeadmFiles(false, CONTAINERD))}`;
  // A report without an id (made by an earlier version of this package): "-", drained whatever was recorded.
  expect(drainVerdict(legacy, "v1.34.2", CRIO)).toBe(`drain - container runtime ${CONTAINERD} -> ${CRIO}\n`);
  // /var/run and /run are the same socket; unreadable output drains (the safe side).
  expect(drainVerdict(report("v1.34.2", "unix:///var/run/containerd/containerd.sock"), "v1.34.2", CONTAINERD)).toMatch(/^keep /);
  expect(drainVerdict("pk-file /var/lib/kubelet/config.yaml 0000 eA==\n", "v1.34.2", CONTAINERD)).toMatch(/^drain - the node's state could not be read/);
  // Nothing reported (the node joined at the target: its upgrade step ran no command).
  expect(drainVerdict("", "v1.34.2", CONTAINERD)).toBe("keep - the node joined at the target, nothing rolled out\n");
});

/**
 * A kubectl stub over a Node whose unschedulable flag and cordon mark are given (a drain cordons it, as
 * kubectl drain does); records every write.
 */
function kubectl(unschedulable: boolean, mark: string) {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  const drained = join(box.dir, "drained");
  box.stub(
    "kubectl",
    `${KUBECTL_STUB_TAG}\nshift 2; echo "$*" >>${calls}; u=${unschedulable}; [ ! -f ${drained} ] || u=true; case "$1" in drain) touch ${drained} ;; get) case "$*" in *labels*) tagged w1 "$u" "" "" '${mark}' ;; *metadata.name*) tagged w1 "$u" '${mark}' ;; *unschedulable*) printf '%s' "$u|${mark}" ;; *) printf '%s' '${mark}' ;; esac ;; esac`,
  );
  const writes = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []).filter((c) => !c.startsWith("get "));
  return { box, writes };
}

test("drain: marks the cordon as this component's, drains; an operator's cordon is drained but not marked", () => {
  const script = drainScripts({ members: ["w1"], timeoutSeconds: 5 }).create;
  const ours = kubectl(false, "");
  const r = runBash(script, { stdin: "drain - kubelet v1.33.2 -> v1.34.2\n", bin: ours.box.bin, state: ours.box.state });
  expect(r.status).toBe(0);
  expect(ours.writes()).toEqual([`annotate --overwrite node w1 ${CORDONED}=kubelet v1.33.2 -> v1.34.2`, "drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=5s"]);
  const operators = kubectl(true, "");
  expect(runBash(script, { stdin: "drain - kubelet v1.33.2 -> v1.34.2\n", bin: operators.box.bin, state: operators.box.state }).stderr).toContain("cordoned by someone else; drained, and left cordoned");
  expect(operators.writes()).toEqual(["drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=5s"]);
  const keep = kubectl(false, "");
  expect(runBash(script, { stdin: "keep - kubelet at v1.34.2, runtime unchanged\n", bin: keep.box.bin, state: keep.box.state }).stdout).toBe("w1: no drain: kubelet at v1.34.2, runtime unchanged\n");
  expect(keep.writes()).toEqual([]);
});

test("drain: once per upgrade report; run again on a report it drained for (a drain setting changed, --replace), it leaves an uncordoned node alone", () => {
  const script = drainScripts({ members: ["w1"], timeoutSeconds: 5 }).create;
  const DRAIN = "drain w1 --ignore-daemonsets --delete-emptydir-data --timeout=5s";
  const r1 = "drain 11111111-2222-4333-8444-555555555555 kubelet v1.33.2 -> v1.34.2\n";
  const first = kubectl(false, "");
  expect(runBash(script, { stdin: r1, bin: first.box.bin, state: first.box.state }).stdout).toBe("w1: drained: kubelet v1.33.2 -> v1.34.2\n");
  expect(readFileSync(join(first.box.state, "drained", "w1"), "utf8")).toBe("11111111-2222-4333-8444-555555555555\n");
  // The same report again, the node since uncordoned by its node-metadata step (no mark): nothing.
  const again = kubectl(false, "");
  const second = runBash(script, { stdin: r1, bin: again.box.bin, state: first.box.state });
  expect(second.stdout).toBe("w1: no drain: drained for this upgrade already, uncordoned since (kubelet v1.33.2 -> v1.34.2)\n");
  expect(again.writes()).toEqual([]);
  // The same report on a node still carrying this component's mark (its rollout did not finish): drained again.
  const unfinished = kubectl(true, "kubelet v1.33.2 -> v1.34.2");
  expect(runBash(script, { stdin: r1, bin: unfinished.box.bin, state: first.box.state }).status).toBe(0);
  expect(unfinished.writes()).toEqual([`annotate --overwrite node w1 ${CORDONED}=kubelet v1.33.2 -> v1.34.2`, DRAIN]);
  // A new report (the upgrade step ran again), and a report without an id: drained.
  for (const stdin of ["drain 99999999-2222-4333-8444-555555555555 kubelet v1.34.2 -> v1.35.0\n", "drain - kubelet v1.34.2 -> v1.35.0\n"]) {
    const next = kubectl(false, "");
    expect(runBash(script, { stdin, bin: next.box.bin, state: first.box.state }).stdout).toBe("w1: drained: kubelet v1.34.2 -> v1.35.0\n");
    expect(next.writes()).toEqual([`annotate --overwrite node w1 ${CORDONED}=kubelet v1.34.2 -> v1.35.0`, DRAIN]);
  }
  expect(readFileSync(join(first.box.state, "drained", "w1"), "utf8")).toBe("99999999-2222-4333-8444-555555555555\n");
  // A failed drain records nothing: the same report drains again.
  const blocked = sandbox();
  blocked.stub("kubectl", `shift 2; if [ "$1" = get ]; then printf 'false|'; elif [ "$1" = drain ]; then echo "error: PDB" >&2; exit 1; fi`);
  const r3 = "drain 33333333-2222-4333-8444-555555555555 kubelet v1.34.2 -> v1.35.0\n";
  expect(runBash(script, { stdin: r3, bin: blocked.bin, state: blocked.state }).status).toBe(1);
  expect(existsSync(join(blocked.state, "drained", "w1"))).toBe(false);
});

test("node-metadata uncordons only a node this component cordoned, and removes its mark", () => {
  const script = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.34.2", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" }).create;
  const ours = kubectl(true, "kubelet v1.33.2 -> v1.34.2");
  expect(runBash(script, { bin: ours.box.bin, state: ours.box.state }).status).toBe(0);
  expect(ours.writes()).toEqual(["uncordon w1", `annotate --overwrite node w1 ${CORDONED}-`]);
  const operators = kubectl(true, "");
  expect(runBash(script, { bin: operators.box.bin, state: operators.box.state }).status).toBe(0);
  expect(operators.writes()).toEqual([]);
});

test("kubeadm first, the kubelet after: a failed kubeadm upgrade leaves the kubelet package alone; the files are read after kubeadm; the kubelet restarts once its files are right", () => {
  const box = sandbox();
  const log = join(box.dir, "log");
  box.stub("kubeadm", `echo "kubeadm $*" >>${log}; exit 1`);
  box.stub("systemctl", `echo "systemctl $*" >>${log}`);
  box.stub("kubectl", "exit 1");
  runBash(`echo v1.33.2 >${join(box.state, "version")}`);
  const up = upgradeScripts({ node: "w1", version: "v1.34.2", apply: false, install: `echo "install kubeadm" >>${log}`, wanted: "x", nodeLocalCriSocket: false }).create;
  const failed = runBash(up, { bin: box.bin, state: box.state });
  expect(failed.status).toBe(1);
  expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual(["install kubeadm", "kubeadm upgrade node"]);
  // The files are read only after kubeadm, which rewrites them: a failed kubeadm reports none.
  expect(failed.stdout).toMatch(/^report=[0-9a-f-]{36}\nnodeVersion=v1\.33\.2\n$/);
  // Once kubeadm succeeded: the version read before it, the files after it.
  box.stub("kubeadm", `echo "kubeadm $*" >>${log}`);
  const done = runBash(up, { bin: box.bin, state: box.state });
  expect(done.status).toBe(0);
  expect(done.stdout).toMatch(/^report=[0-9a-f-]{36}\nnodeVersion=v1\.33\.2\npk-file \/var\/lib\/kubelet\/instance-config.yaml \S+ \S+\npk-file \/var\/lib\/kubelet\/config.yaml \S+ \S+\npk-file \/var\/lib\/kubelet\/kubeadm-flags.env \S+ \S+\n$/);
  // Every run reports under an id of its own (the drain step drains once per report).
  expect(done.stdout.split("\n")[0]).not.toBe(failed.stdout.split("\n")[0]);
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.33.2\n");
  // The kubelet step: the package, then one restart and check, then the version recorded.
  const kl = kubeletScript(false, `echo "install kubelet kubectl" >>${log}`);
  const r = runBash(kl, { stdin: "", bin: box.bin, state: box.state });
  expect(r.status).toBe(0);
  // Its one line says the kubelet was upgraded and restarted though no file changed (fails on 91a039d:
  // `changed=0`), and nothing repeats it on stderr.
  expect(r.stdout).toBe("files changed: 0; kubelet upgraded to v1.34.2, restarted and healthy\n");
  expect(r.stderr).not.toContain("restarted");
  expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual([
    "install kubeadm",
    "kubeadm upgrade node",
    "install kubeadm",
    "kubeadm upgrade node",
    "install kubelet kubectl",
    "systemctl daemon-reload",
    "systemctl restart kubelet",
    "systemctl is-active --quiet kubelet",
  ]);
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.34.2\n");
  // Nothing more to do: a re-run installs nothing and restarts nothing.
  expect(runBash(kl, { stdin: "", bin: box.bin, state: box.state }).stdout).toBe("files changed: 0; kubelet not restarted\n");
  expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toHaveLength(8);
});

test("kubelet: a re-run after the new kubelet failed its check installs nothing again; it restarts, checks and records", () => {
  const box = sandbox();
  const log = join(box.dir, "log");
  const healthy = join(box.dir, "healthy");
  box.stub("systemctl", `echo "systemctl $1" >>${log}; [ "$1" != is-active ] || [ -f ${healthy} ]`);
  box.stub("kubectl", "exit 1");
  runBash(`echo v1.33.2 >${join(box.state, "version")}`);
  const kl = kubeletScript(false, `echo "install kubelet kubectl" >>${log}`);
  const first = runBash(kl, { stdin: "", bin: box.bin, state: box.state });
  expect(first.status).toBe(1);
  expect(first.stderr).toContain("pulumi-kubeadm: node w1: the kubelet is not healthy after the upgrade to v1.34.2");
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.33.2\n");
  runBash(`touch ${healthy}`);
  const second = runBash(kl, { stdin: "", bin: box.bin, state: box.state });
  expect(second.status).toBe(0);
  expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual([
    "install kubelet kubectl",
    "systemctl daemon-reload",
    "systemctl restart",
    "systemctl is-active",
    "systemctl status",
    "systemctl daemon-reload",
    "systemctl restart",
    "systemctl is-active",
  ]);
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.34.2\n");
});

test("a gate toggle or a runtime switch without a version change: the upgrade step runs no kubeadm and no install, and reports the files again", () => {
  const box = sandbox();
  const log = join(box.dir, "log");
  box.stub("kubeadm", `echo "kubeadm $*" >>${log}`);
  box.stub("kubectl", "exit 1");
  runBash(`echo v1.34.2 >${join(box.state, "version")}`);
  for (const wanted of ["node-local unix:///run/containerd/containerd.sock", "legacy unix:///var/run/crio/crio.sock"]) {
    const up = upgradeScripts({ node: "w1", version: "v1.34.2", apply: false, install: `echo "install kubeadm" >>${log}`, wanted, nodeLocalCriSocket: false }).create;
    const r = runBash(up, { stdin: "", bin: box.bin, state: box.state });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^report=[0-9a-f-]{36}\nnodeVersion=v1\.34\.2\n(pk-file \S+ \S+ \S+\n){3}$/);
  }
  expect(existsSync(log)).toBe(false);
});

/** Runs pk_version_rules on a node: kubectl answers kubeadm-config at `cluster` ("" = no cluster there). */
function rules(target: string, kubelet: string, first: boolean, cluster: string, member: boolean) {
  const box = sandbox();
  box.stub("kubectl", cluster === "" ? "exit 1" : `printf 'kind: ClusterConfiguration\\nkubernetesVersion: ${cluster}\\n'`);
  const k8s = join(box.dir, "k8s");
  runBash(`mkdir -p ${k8s} && ${member ? `touch ${k8s}/kubelet.conf` : "true"} && ${cluster !== "" && first ? `touch ${k8s}/admin.conf` : "true"}`);
  const script = renderScript("w-1", [`pk_version_rules ${target} '${kubelet}' ${first ? "yes" : "no"}`]);
  return runBash(sandboxed(script, box.dir, (t) => t.split("/etc/kubernetes").join(k8s)), { bin: box.bin, state: box.state });
}

test("version rules on each node before anything changes: the cluster's step (first control-plane node), every kubelet's skew", () => {
  const fails = (r: { status: number | null; stderr: string }) => (r.status === 0 ? "" : r.stderr.trim());
  expect(fails(rules("v1.35.0", "v1.34.2", true, "v1.34.2", true))).toBe("");
  expect(fails(rules("v1.36.0", "v1.34.2", true, "v1.34.2", true))).toBe(
    "pulumi-kubeadm: node w-1: the cluster runs v1.34.2: kubeadm upgrades one minor version at a time (next: v1.35.x), not to v1.36.0; nothing was changed",
  );
  expect(fails(rules("v1.34.1", "v1.34.1", true, "v1.34.2", true))).toBe("pulumi-kubeadm: node w-1: the cluster runs v1.34.2: kubeadm cannot downgrade it to v1.34.1; nothing was changed");
  // A member's kubelet against the API server now; a joining node's against the target.
  expect(fails(rules("v1.35.0", "v1.35.0", false, "v1.34.2", true))).toBe(
    "pulumi-kubeadm: node w-1: its kubelet v1.35.0 is newer than the API server (v1.34.2); the kubelet may never be newer than kube-apiserver; nothing was changed",
  );
  expect(fails(rules("v1.35.0", "v1.35.0", false, "", false))).toBe("");
  expect(fails(rules("v1.35.0", "v1.36.0", false, "", false))).toBe(
    "pulumi-kubeadm: node w-1: its kubelet v1.36.0 is newer than the API server will be (v1.35.0); the kubelet may never be newer than kube-apiserver; nothing was changed",
  );
  expect(fails(rules("v1.35.0", "v1.31.4", false, "", false))).toBe(
    "pulumi-kubeadm: node w-1: its kubelet v1.31.4 is more than three minor versions older than v1.35.0; upgrade it first; nothing was changed",
  );
  // No kubelet installed yet: nothing to check.
  expect(fails(rules("v1.35.0", "", false, "", false))).toBe("");
});
