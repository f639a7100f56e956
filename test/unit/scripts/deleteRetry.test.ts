/**
 * The destructive deletes (a node's `kubeadm reset` in init/join, its drain in node-metadata, its Node
 * deletion in join-token) in bash, when their work fails once: the delete fails, keeps its ownership
 * claim, and its retry (the next `pulumi up` or `pulumi destroy` runs the same delete again) does the work;
 * only a delete whose work succeeded drops the claim. Before, the claim was dropped before the work, so
 * the retry found none, did nothing and exited 0: Pulumi dropped the resource with the node not drained,
 * its Node not deleted, or the machine not reset. An API server that does not answer fails these deletes
 * in a removal (they took it for a Node that does not exist and skipped their work), but not in a
 * destroy of the whole cluster, which must still reset every machine.
 */
import { existsSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { joinScripts } from "../../../components/steps/join";
import { joinTokenScripts } from "../../../components/steps/joinToken";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { runBash, sandbox, sandboxed } from "./bash";

const CRIO = "unix:///var/run/crio/crio.sock";

/**
 * A sandbox whose kubeadm and kubectl stubs log their calls and whose call `failing` (a prefix of its
 * arguments, e.g. `drain`) fails once after `arm()`, as a drain blocked by a PodDisruptionBudget or an
 * API server that did not answer (`get node`); a Node `w1` exists; the admin kubeconfig is a sandbox file.
 */
function box(failing: { tool: "kubeadm" | "kubectl"; args: string }) {
  const b = sandbox();
  const calls = join(b.dir, "calls");
  const armed = join(b.dir, "armed");
  const fail = (tool: string) =>
    tool === failing.tool
      ? `case "$*" in "${failing.args}"*) if [ -e ${armed} ]; then rm ${armed}; echo "The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?" >&2; exit 1; fi ;; esac\n`
      : "";
  b.stub("kubeadm", `echo "kubeadm $*" >>${calls}\n${fail("kubeadm")}`);
  // lib.sh calls kubectl with --kubeconfig <file> first.
  b.stub("kubectl", `shift 2; echo "kubectl $*" >>${calls}\n${fail("kubectl")}`);
  const admin = join(b.dir, "admin.conf");
  writeFileSync(admin, "");
  const rewrite = (t: string) => t.split("/etc/kubernetes/admin.conf").join(admin);
  const run = (script: string, stdin = "") => runBash(sandboxed(script, b.dir, rewrite), { bin: b.bin, state: b.state, stdin });
  const log = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []);
  const claim = (scope: string) => {
    const f = join(b.state, "owners", scope);
    return existsSync(f) ? readFileSync(f, "utf8") : undefined;
  };
  return { ...b, run, log, claim, arm: () => writeFileSync(armed, "") };
}

/** Runs `create`, then `del` twice: the first fails on the stubbed failure, the second must do the work. */
function failThenRetry(b: ReturnType<typeof box>, create: string, del: string, scope: string, owner: string, stdin = "") {
  expect(b.run(create, stdin).status).toBe(0);
  // A removal: the members record's list (the last up's nodes) no longer names w1.
  writeFileSync(join(b.state, "members"), "# written by c-members\ncp1\n");
  expect(b.claim(scope)).toBe(`${owner}\n`);
  b.arm();
  const first = b.run(del);
  expect(first.status).not.toBe(0);
  // The claim stays: the work was not done.
  expect(b.claim(scope)).toBe(`${owner}\n`);
  const retry = b.run(del);
  expect({ status: retry.status, stderr: retry.stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining("holds no claim") });
  expect(b.claim(scope)).toBeUndefined();
  return first;
}

/** The three destructive deletes: the step's scripts (`w1`'s, resource `c-w1-<step>`), its claim scope, the stdin of its create. */
const DELETES = {
  join: { scripts: joinScripts({ node: "w1", criSocket: CRIO, scope: "w1-join", owner: "c-w1-join", formerOwners: [], materialFrom: "c-w1-join-token" }), stdin: "x: 1\n" },
  "node-metadata": {
    scripts: nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.34.2", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" }),
    stdin: "",
  },
  "join-token": { scripts: joinTokenScripts({ node: "w1", controlPlane: false, tokenTtl: "2h0m0s", scope: "w1-join-token", owner: "c-w1-join-token" }), stdin: "" },
};

const RESET = `kubeadm reset -f --cri-socket ${CRIO}`;
const DRAIN = /^kubectl drain w1 /;
const DELETE_NODE = "kubectl delete node w1";

test.each([
  { step: "join" as const, why: "a kubeadm reset that fails", failing: { tool: "kubeadm" as const, args: "reset" }, work: RESET, runs: 2, says: "was refused" },
  { step: "node-metadata" as const, why: "a drain that fails", failing: { tool: "kubectl" as const, args: "drain" }, work: DRAIN, runs: 2, says: "drain failed; the node stays cordoned" },
  { step: "join-token" as const, why: "a Node deletion that fails", failing: { tool: "kubectl" as const, args: "delete node" }, work: DELETE_NODE, runs: 2, says: "was refused" },
  // An API server that does not answer: the delete took it for a Node that does not exist and skipped its work.
  { step: "node-metadata" as const, why: "an API server that does not answer", failing: { tool: "kubectl" as const, args: "get node w1 -o name" }, work: DRAIN, runs: 1, says: "could not read the Node w1 from the API server (kubectl's error above), nothing done" },
  { step: "join-token" as const, why: "an API server that does not answer", failing: { tool: "kubectl" as const, args: "get node w1 -o name" }, work: DELETE_NODE, runs: 1, says: "could not read the Node w1 from the API server (kubectl's error above), nothing done" },
])("$step: $why fails the delete, which keeps its claim; the retried delete does the work and drops it", ({ step, failing, work, runs, says }) => {
  const b = box(failing);
  // The join material's kubeadm prints a join command (join-token's create reads it).
  if (step === "join-token") b.stub("kubeadm", `echo "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:${"a".repeat(64)}"`);
  const { scripts, stdin } = DELETES[step];
  const first = failThenRetry(b, scripts.create, scripts.delete as string, `w1-${step}`, `c-w1-${step}`, stdin);
  expect(first.stderr).toContain(says);
  const did = b.log().filter((c) => (typeof work === "string" ? c === work : work.test(c)));
  // The failed attempt's own call counts when it was the work that failed.
  expect(did).toHaveLength(runs);
});

test.each(["node-metadata" as const, "join-token" as const])(
  "%s: in a destroy of the whole cluster (no list of nodes: the members record was deleted first), an API server that does not answer is said and the delete goes on, so every machine is still reset",
  (step) => {
    const b = box({ tool: "kubectl", args: "get node w1 -o name" });
    if (step === "join-token") b.stub("kubeadm", `echo "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:${"a".repeat(64)}"`);
    const { scripts } = DELETES[step];
    expect(b.run(scripts.create).status).toBe(0);
    b.arm();
    const r = b.run(scripts.delete as string);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("could not read the Node w1 from the API server (above); no list of the nodes here, so the cluster is being destroyed: going on without it");
    expect(b.log().filter((c) => DRAIN.test(c) || c === DELETE_NODE)).toEqual([]);
    expect(b.claim(`w1-${step}`)).toBeUndefined();
  },
);
