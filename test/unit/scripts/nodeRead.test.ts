/**
 * Reads of a Node that decide whether a step has work to do (lib.sh's pk_get_node): only the API
 * server's own answer that the Node does not exist (kubectl's `nodes "<name>" not found`) counts as no
 * Node; any other failure (no answer, refused credentials, a proxy's 404) fails the step with kubectl's
 * error, nothing done. Before, the `forget` step printed `no such Node` when the API server did not
 * answer, and a node without a version record was taken to be at the target version, so its upgrade
 * was skipped.
 */
import { mkdirSync, writeFileSync } from "fs";
import { join } from "path";
import { forgetScripts } from "../../../components/steps/forget";
import { renderScript } from "../../../components/scripts/script";
import { runBash, sandbox, sandboxed } from "./bash";

const REFUSED = "The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?";
const PROXY_404 = "Error from server (NotFound): the server could not find the requested resource (get nodes w1)";
const NOT_FOUND = 'Error from server (NotFound): nodes "w1" not found';

/** A sandbox whose kubectl prints `stdout` and exits 0, or prints `error` on stderr and exits 1; the admin kubeconfig a sandbox file. */
function box() {
  const b = sandbox();
  const admin = join(b.dir, "admin.conf");
  writeFileSync(admin, "");
  const kubectl = (answer: { stdout: string } | { error: string }) =>
    b.stub("kubectl", "stdout" in answer ? `printf '%s' '${answer.stdout}'` : `echo '${answer.error}' >&2; exit 1`);
  const run = (script: string) => runBash(sandboxed(script, b.dir, (t) => t.split("/etc/kubernetes/admin.conf").join(admin).split("/etc/kubernetes").join(join(b.dir, "k8s"))), { bin: b.bin, state: b.state });
  return { ...b, kubectl, run };
}

test.each([
  { answer: { error: REFUSED }, says: REFUSED },
  { answer: { error: PROXY_404 }, says: PROXY_404 },
])("forget: a Node that cannot be read ($says) fails the step, nothing done, not 'no such Node'", ({ answer, says }) => {
  const b = box();
  b.kubectl(answer);
  const r = b.run(forgetScripts("w1").create);
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 1, stdout: "" });
  expect(r.stderr).toContain(`${says}\npulumi-kubeadm: node w1: could not read the Node w1 from the API server (kubectl's error above), nothing done`);
});

test("forget: the API server's NotFound is 'no such Node'; a Node it has is deleted", () => {
  const b = box();
  b.kubectl({ error: NOT_FOUND });
  expect(b.run(forgetScripts("w1").create)).toMatchObject({ status: 0, stdout: "no such Node\n" });
  b.kubectl({ stdout: "node/w1" });
  expect(b.run(forgetScripts("w1").create)).toMatchObject({ status: 0, stdout: "Node deleted; nothing ran on the machine\n" });
});

describe("a node without a version record (made by an earlier version of this package): its version from the cluster", () => {
  const versionOf = (b: ReturnType<typeof box>) => b.run(renderScript("w1", ['pk_node_version w1 v1.35.0']));
  const joined = () => {
    const b = box();
    mkdirSync(join(b.dir, "k8s"), { recursive: true });
    writeFileSync(join(b.dir, "k8s", "kubelet.conf"), "");
    return b;
  };

  test("read: the kubelet version the Node reports; no such Node: the target", () => {
    const b = joined();
    b.kubectl({ stdout: "v1.34.2" });
    expect(versionOf(b)).toMatchObject({ status: 0, stdout: "v1.34.2" });
    b.kubectl({ error: NOT_FOUND });
    expect(versionOf(b)).toMatchObject({ status: 0, stdout: "v1.35.0" });
  });

  test("not readable: the upgrade step fails, nothing done, where it took the node to be at the target and skipped kubeadm upgrade", () => {
    const b = joined();
    b.kubectl({ error: REFUSED });
    const r = b.run(renderScript("w1", ["pk_upgrade_step w1 v1.35.0 no"]));
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 1, stdout: "" });
    expect(r.stderr).toContain("this node has no version record and the API server did not give its Node's kubelet version (kubectl's error above); nothing was changed");
  });
});

test("a temp file that cannot be made is said, and counts as a Node not read, never as no Node", () => {
  const b = box();
  b.kubectl({ stdout: "node/w1" });
  b.stub("mktemp", "exit 1");
  const r = b.run(forgetScripts("w1").create);
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 1, stdout: "" });
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: mktemp failed, so the Node w1 was not read\npulumi-kubeadm: node w1: could not read the Node w1");
});
