/**
 * The join waves' scripts for real in bash (kubeadm and kubectl stubs, a temp state dir): one token for
 * the wave and the members' join-token claims; every member's Node edits in one session, each with its
 * own endpoint line; and the guard that keeps a worker's destructive deletes (drain, Node deleted) from
 * acting on a `--replace` of a step whose create ran no command (the wave holds its claim), while a
 * removed node is still drained and its Node deleted.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { joinMaterialScripts } from "../../../components/steps/joinMaterial";
import { joinTokenScripts } from "../../../components/steps/joinToken";
import { nodeMetadataLines, nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { membersFileScripts } from "../../../components/scripts/members";
import { renderScript } from "../../../components/scripts/script";
import { waveMetadata } from "../../../components/steps/waveMetadata";
import type { StepContext } from "../../../components/steps/kind";
import { validateCluster } from "../../../components/kubeadm/validate";
import type { ClusterSpec } from "../../../components/kubeadm/types";
import { buildPlan } from "../../../components/plan/steps";
import { STEP_SETTINGS } from "../helpers/fixtures";
import { KUBECTL_STUB_TAG, runBash, sandbox, sandboxed } from "./bash";

const TOKEN = "abcdef.0123456789abcdef";
const HASH = `sha256:${"a".repeat(64)}`;
const CRIO = "unix:///var/run/crio/crio.sock";
const CONTAINERD = "unix:///run/containerd/containerd.sock";

/** A sandbox whose admin.conf check passes, with kubeadm and kubectl stubs logging their calls. */
function box() {
  const b = sandbox();
  const calls = join(b.dir, "calls");
  b.stub("kubeadm", `echo "kubeadm $*" >>${calls}; echo "kubeadm join 10.0.0.1:6443 --token ${TOKEN} --discovery-token-ca-cert-hash ${HASH}"`);
  b.stub("kubectl", `${KUBECTL_STUB_TAG}\nshift 2; echo "kubectl $*" >>${calls}; if [ "$1" = get ] && [ "$4" = -o ]; then tagged "$3" false "" '${CONTAINERD}' ""; fi`);
  // The admin kubeconfig a sandbox file, in the scripts and in lib.sh's functions (pk_join_material) alike.
  const admin = join(b.dir, "admin.conf");
  writeFileSync(admin, "");
  const run = (script: string, stdin = "") => runBash(sandboxed(script, b.dir, (t) => t.split("/etc/kubernetes/admin.conf").join(admin)), { bin: b.bin, state: b.state, stdin });
  const log = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []);
  const claims = (scope: string) => (existsSync(join(b.state, "owners", scope)) ? readFileSync(join(b.state, "owners", scope), "utf8") : "");
  return { ...b, run, log, claims };
}

const claimsOf = (members: string[], action: string) => members.map((m) => ({ scope: `${m}-${action}`, owner: `c-${m}-${action}`, formerOwners: [] }));

test("join-material: one kubeadm token for the wave, printed as a join-token prints it, and each member's join-token claim once", () => {
  const b = box();
  const script = joinMaterialScripts("cp1", "2h0m0s", claimsOf(["w1", "w2"], "join-token")).create;
  const r = b.run(script);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  expect(r.stdout).toMatch(new RegExp(`^apiServerEndpoint=10\\.0\\.0\\.1:6443\\ntoken=${TOKEN}\\ncaCertHash=${HASH}\\ncertificateKey=\\nvalidUntil=[0-9]+\\n$`));
  expect(b.log()).toEqual(["kubeadm token create --ttl 2h0m0s --print-join-command"]);
  expect([b.claims("w1-join-token"), b.claims("w2-join-token")]).toEqual(["c-w1-join-token\n", "c-w2-join-token\n"]);
  // Made again (a replaced wave): no second claim.
  b.run(script);
  expect(b.claims("w1-join-token")).toBe("c-w1-join-token\n");
});

test("a wave's node edits: each member's lines read its own endpoint line, in order (gate off)", () => {
  const b = box();
  const lines = ["w1", "w2"].flatMap((m) => nodeMetadataLines({ node: m, labels: { tier: m }, nodeLocalCriSocket: false }));
  const r = b.run(renderScript("cp1", lines), `${CONTAINERD}\n${CRIO}\n`);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  const writes = b.log().filter((c) => !c.startsWith("kubectl get "));
  expect(writes).toEqual([
    "kubectl label --overwrite node w1 tier=w1",
    "kubectl annotate --overwrite node w1 kubeadm.pulumi.com/labels=tier",
    "kubectl label --overwrite node w2 tier=w2",
    `kubectl annotate --overwrite node w2 kubeadm.pulumi.com/labels=tier kubeadm.alpha.kubernetes.io/cri-socket=${CRIO}`,
  ]);
});

describe("a worker's own steps whose create ran no command (the wave claimed for them)", () => {
  const tokenScripts = joinTokenScripts({ node: "w1", controlPlane: false, tokenTtl: "2h0m0s", scope: "w1-join-token", owner: "c-w1-join-token" });
  const metadataScripts = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.34.2", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" });
  const claimed = () => {
    const b = box();
    b.run(joinMaterialScripts("cp1", "2h0m0s", claimsOf(["w1"], "join-token")).create);
    writeFileSync(join(b.state, "owners", "w1-node-metadata"), "c-w1-node-metadata\n");
    return b;
  };

  test("--replace (the node still in the last up's nodes): the old deletes drain nothing and delete no Node, and the claims stay", () => {
    const b = claimed();
    expect(b.run(membersFileScripts("cp1", "c-members", ["cp1", "w1"]).create).status).toBe(0);
    for (const del of [metadataScripts.delete, tokenScripts.delete]) {
      const r = b.run(del as string);
      expect(r.status).toBe(0);
      expect(r.stderr).toMatch(/node w1: still in the nodes of the last up: a replacement, not a removal; nothing done/);
    }
    expect(b.log().filter((c) => !c.startsWith("kubeadm"))).toEqual([]);
    expect([b.claims("w1-join-token"), b.claims("w1-node-metadata")]).toEqual(["c-w1-join-token\n", "c-w1-node-metadata\n"]);
  });

  test("removal (not in the last up's nodes): drained, and its Node deleted", () => {
    const b = claimed();
    b.run(membersFileScripts("cp1", "c-members", ["cp1"]).create);
    expect(b.run(metadataScripts.delete as string).status).toBe(0);
    expect(b.run(tokenScripts.delete as string).status).toBe(0);
    const kubectl = b.log().filter((c) => c.startsWith("kubectl") && !c.startsWith("kubectl get "));
    expect(kubectl[0]).toMatch(/^kubectl drain w1 /);
    expect(kubectl[kubectl.length - 1]).toBe("kubectl delete node w1");
  });

  test("no node list (a destroyed cluster: the members record's delete removed it): the deletes act as before", () => {
    const b = claimed();
    b.run(membersFileScripts("cp1", "c-members", ["cp1", "w1"]).create);
    // The delete of another record (the cluster renamed without an alias) leaves this record's list.
    b.run(membersFileScripts("cp1", "old-members", ["cp1", "w1"]).delete);
    expect(b.run(tokenScripts.delete as string).stderr).toMatch(/still in the nodes of the last up/);
    b.run(membersFileScripts("cp1", "c-members", ["cp1", "w1"]).delete);
    expect(b.run(tokenScripts.delete as string).status).toBe(0);
    expect(b.log()).toContain("kubectl delete node w1");
  });
});

/** The context of the one join wave's node-metadata step of a cluster `cp1` + `members` (workers; w3 labelled tier=b), gate on. */
function waveContext(members: string[]): StepContext {
  const nodes = [{ name: "cp1", role: "control-plane", host: "10.0.0.1" }, ...members.map((name, i) => ({ name, role: "worker", host: `10.0.1.${i + 1}`, ...(name === "w3" ? { labels: { tier: "b" } } : {}) }))];
  const cluster = validateCluster({ kubernetesVersion: "v1.34.2", nodes, controlPlaneEndpoint: "10.0.0.1:6443", featureGates: { NodeLocalCRISocket: true } } as unknown as ClusterSpec);
  const step = buildPlan(cluster, { maxConcurrentJoins: members.length }).find((s) => s.id === "workers_1-node-metadata");
  const node = cluster.nodes[0];
  if (step === undefined || node === undefined) throw new Error("no workers_1-node-metadata step");
  return { cluster, node, step, settings: STEP_SETTINGS, owner: `c-${step.id}`, formerOwners: [], resourceName: (id) => `c-${id}`, formerResourceNames: () => [] };
}

describe("a wave's node edits read every member's Node in ONE kubectl call", () => {
  /**
   * kubectl over per-Node read answers (the node-metadata read's fields: unschedulable, labels record,
   * cri-socket annotation, cordon mark), printed as kubectl prints the read's jsonpath (`tagged`): `get node
   * N` prints N's line; `get nodes A B ...` a line for each it knows, leaving out (and exiting 1 for) the
   * others, as kubectl does.
   */
  function readsBox(answers: Record<string, string[]>) {
    const b = box();
    const dir = join(b.dir, "reads");
    mkdirSync(dir);
    // The fields NUL-separated (a field may hold a newline or a `|`), read back into an array.
    for (const [n, a] of Object.entries(answers)) writeFileSync(join(dir, n), a.map((f) => `${f}\0`).join(""));
    const calls = join(b.dir, "calls");
    b.stub(
      "kubectl",
      [
        KUBECTL_STUB_TAG,
        `shift 2; echo "kubectl $*" >>${calls}`,
        `answer() { local -a f; mapfile -t -d '' f <${dir}/"$1"; tagged "$1" "\${f[@]}"; }`,
        `if [ "$1 $2" = "get node" ]; then [ -f ${dir}/"$3" ] || exit 1; answer "$3"; exit 0; fi`,
        `if [ "$1 $2" = "get nodes" ]; then shift 2; rc=0; while [ "$1" != -o ]; do if [ -f ${dir}/"$1" ]; then answer "$1"; else rc=1; fi; shift; done; exit $rc; fi`,
      ].join("\n"),
    );
    return b;
  }
  const reads = (log: string[]) => log.filter((c) => c.startsWith("kubectl get "));
  const writes = (log: string[]) => log.filter((c) => !c.startsWith("kubectl get "));

  test("three members: one read for all, and each member's edits follow its own Node's answer", () => {
    const b = readsBox({ w1: ["", "", "unix:///run/containerd/containerd.sock", ""], w2: ["", "tier", "", ""], w3: ["true", "", "", "ours"] });
    const lines = ["w1", "w2", "w3"].flatMap((m) => nodeMetadataLines({ node: m, labels: m === "w3" ? { tier: "b" } : {}, nodeLocalCriSocket: true }));
    const script = waveMetadata.scripts(waveContext(["w1", "w2", "w3"]), "").create as string;
    expect(script).toContain("pk_read_metadata 'w1' 'w2' 'w3'\n" + lines.join("\n"));
    const r = b.run(script);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining("pulumi-kubeadm:") });
    expect(reads(b.log())).toHaveLength(2); // the one read, and w3's uncordon check after its uncordon
    expect(reads(b.log())[0]).toMatch(/^kubectl get nodes w1 w2 w3 -o jsonpath=\{range \.items\[\*\]\}([0-9a-f-]{36})\{\.metadata\.name\}\1\{\.spec\.unschedulable\}\1\{/);
    expect(writes(b.log())).toEqual([
      "kubectl annotate --overwrite node w1 kubeadm.alpha.kubernetes.io/cri-socket-",
      "kubectl label --overwrite node w2 tier-",
      "kubectl annotate --overwrite node w2 kubeadm.pulumi.com/labels=",
      "kubectl uncordon w3",
      "kubectl label --overwrite node w3 tier=b",
      "kubectl annotate --overwrite node w3 kubeadm.pulumi.com/cordoned- kubeadm.pulumi.com/labels=tier",
    ]);
  });

  test("an annotation value holding a newline cannot pass for another member's Node: only the lines led by the read's tag count", () => {
    // w2's cri-socket annotation ends in a line that looks like w1's (cordoned by this component, labels to drop).
    const forged = "unix:///run/containerd/containerd.sock\nw1|true|tier,team||forged";
    const b = readsBox({ w1: ["", "", "", ""], w2: ["", "", forged, ""] });
    const r = b.run(waveMetadata.scripts(waveContext(["w1", "w2"]), "").create as string);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    // w1 as it is: nothing to uncordon, no label to drop; w2's annotation removed (the gate is on).
    expect(writes(b.log())).toEqual(["kubectl annotate --overwrite node w2 kubeadm.alpha.kubernetes.io/cri-socket-"]);
  });

  test("a `|` inside an annotation value does not shift the fields: an operator's cordon stays", () => {
    // w2 cordoned by an operator (no mark of this component), its cri-socket annotation holding a `|`.
    const b = readsBox({ w1: ["", "", "", ""], w2: ["true", "", "unix:///run/containerd/containerd.sock|x", ""] });
    const r = b.run(waveMetadata.scripts(waveContext(["w1", "w2"]), "").create as string);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
    expect(writes(b.log())).toEqual(["kubectl annotate --overwrite node w2 kubeadm.alpha.kubernetes.io/cri-socket-"]);
  });

  test("a member the one read did not return is read on its own, and fails naming it when it is not registered", () => {
    const b = readsBox({ w1: ["", "", "", ""] });
    const r = b.run(waveMetadata.scripts(waveContext(["w1", "w2"]), "").create as string);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("pulumi-kubeadm: node w2: the Node object is not registered");
    expect(reads(b.log()).map((c) => c.split(" -o ")[0])).toEqual(["kubectl get nodes w1 w2", "kubectl get node w2"]);
  });
});
