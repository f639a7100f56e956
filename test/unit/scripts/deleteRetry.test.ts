/**
 * The destructive deletes (a node's `kubeadm reset` in init/join, its drain in node-metadata, its Node
 * deletion in join-token) in bash, when their work fails once: the delete fails, keeps its ownership
 * claim, and its retry (the next `pulumi up` or `pulumi destroy` runs the same delete again) does the work;
 * only a delete whose work succeeded drops the claim. Before, the claim was dropped before the work, so
 * the retry found none, did nothing and exited 0: Pulumi dropped the resource with the node not drained,
 * its Node not deleted, or the machine not reset.
 */
import { existsSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { joinScripts } from "../../../components/steps/join";
import { joinTokenScripts } from "../../../components/steps/joinToken";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { runBash, sandbox, sandboxed } from "./bash";

const CRIO = "unix:///var/run/crio/crio.sock";

/**
 * A sandbox whose kubeadm and kubectl stubs log their calls and whose kubectl call `failing` (a prefix
 * of its arguments, e.g. `drain`) fails the first time, as a drain blocked by a PodDisruptionBudget or an
 * API server that did not answer; a Node `w1` exists; the admin kubeconfig is a sandbox file.
 */
function box(failing: { tool: "kubeadm" | "kubectl"; args: string }) {
  const b = sandbox();
  const calls = join(b.dir, "calls");
  const once = join(b.dir, "failed-once");
  const fail = (tool: string) =>
    tool === failing.tool ? `case "$*" in "${failing.args}"*) if [ ! -e ${once} ]; then touch ${once}; echo "error: ${failing.args} failed" >&2; exit 1; fi ;; esac\n` : "";
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
  return { ...b, run, log, claim };
}

/** Runs `create`, then `del` twice: the first fails on the stubbed failure, the second must do the work. */
function failThenRetry(b: ReturnType<typeof box>, create: string, del: string, scope: string, owner: string, stdin = "") {
  expect(b.run(create, stdin).status).toBe(0);
  expect(b.claim(scope)).toBe(`${owner}\n`);
  const first = b.run(del);
  expect(first.status).not.toBe(0);
  // The claim stays: the work was not done.
  expect(b.claim(scope)).toBe(`${owner}\n`);
  const retry = b.run(del);
  expect({ status: retry.status, stderr: retry.stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining("holds no claim") });
  expect(b.claim(scope)).toBeUndefined();
  return first;
}

test("join: a kubeadm reset that fails is run again by the retried delete, which then drops the claim", () => {
  const b = box({ tool: "kubeadm", args: "reset" });
  const s = joinScripts({ node: "w1", criSocket: CRIO, scope: "w1-join", owner: "c-w1-join", formerOwners: [], materialFrom: "c-w1-join-token" });
  failThenRetry(b, s.create, s.delete as string, "w1-join", "c-w1-join", "x: 1\n");
  expect(b.log().filter((c) => c.startsWith("kubeadm reset"))).toEqual([`kubeadm reset -f --cri-socket ${CRIO}`, `kubeadm reset -f --cri-socket ${CRIO}`]);
});

test("node-metadata: a drain that fails is run again by the retried delete (the node removed from the cluster)", () => {
  const b = box({ tool: "kubectl", args: "drain" });
  const s = nodeMetadataScripts({ node: "w1", labels: {}, nodeLocalCriSocket: true, version: "v1.34.2", drainTimeoutSeconds: 1, drainOnDelete: true, scope: "w1-node-metadata", owner: "c-w1-node-metadata" });
  // The create reads the Node; the stub prints nothing for it (schedulable, no mark, no annotation).
  const first = failThenRetry(b, s.create, s.delete as string, "w1-node-metadata", "c-w1-node-metadata");
  expect(first.stderr).toContain("drain failed; the node stays cordoned");
  expect(b.log().filter((c) => c.startsWith("kubectl drain w1 "))).toHaveLength(2);
});

test("join-token: a Node deletion that fails is run again by the retried delete", () => {
  const b = box({ tool: "kubectl", args: "delete node" });
  const s = joinTokenScripts({ node: "w1", controlPlane: false, tokenTtl: "2h0m0s", scope: "w1-join-token", owner: "c-w1-join-token" });
  b.stub("kubeadm", `echo "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:${"a".repeat(64)}"`);
  failThenRetry(b, s.create, s.delete as string, "w1-join-token", "c-w1-join-token");
  expect(b.log().filter((c) => c === "kubectl delete node w1")).toHaveLength(2);
});
