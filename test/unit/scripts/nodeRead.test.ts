/**
 * Reads of a Node that decide whether a step has work to do (lib.sh's pk_get_node): only the API
 * server's own answer that the Node does not exist (kubectl's `nodes "<name>" not found`) counts as no
 * Node; any other failure (no answer, refused credentials, a proxy's 404) fails the step with kubectl's
 * error, nothing done. Before, the `forget` step printed `no such Node` when the API server did not
 * answer, and a node without a version record was taken to be at the target version, so its upgrade
 * was skipped.
 */
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { forgetScripts } from "../../../components/steps/forget";
import { renderScript } from "../../../components/scripts/script";
import { KUBECTL_STUB_TAG, runBash, sandbox, sandboxed } from "./bash";

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

describe("pk_nodes_lines: several Nodes in one kubectl call, one line each, only those led by the call's tag", () => {
  /**
   * kubectl printing, as it prints the read's jsonpath (`tagged`), w1's line, then w2's, whose value holds
   * a newline followed by a line shaped like w1's, and a `|`.
   */
  function forging() {
    const b = box();
    const calls = join(b.dir, "calls");
    b.stub("kubectl", [KUBECTL_STUB_TAG, `echo "$*" >>${calls}`, `tagged w1 ""`, `tagged w2 $'x\nw1|true|forged'`, `tagged w3 'a|b'`].join("\n"));
    return { ...b, calls: () => readFileSync(calls, "utf8") };
  }

  test.each([
    { names: ["w1", "w2"], form: /get nodes w1 w2 -o jsonpath=\{range \.items\[\*\]\}([0-9a-f-]{36})\{\.metadata\.name\}\1\{\.spec\.unschedulable\}\1\{\.metadata\.labels\.x\}\{"\\n"\}\{end\}/ },
    { names: [], form: /get nodes -o jsonpath=\{range \.items\[\*\]\}([0-9a-f-]{36})\{\.metadata\.name\}\1\{\.spec\.unschedulable\}\1\{\.metadata\.labels\.x\}\{"\\n"\}\{end\}/ },
  ])("named $names: a value's own lines are left out, so no line passes for another Node's, and a `|` in a value is no field's end", ({ names, form }) => {
    const b = forging();
    const r = b.run(renderScript("cp1", [["pk_nodes_lines", "'{.spec.unschedulable}|{.metadata.labels.x}'", ...names].join(" ")]));
    // Each Node's name, then its one field (the stub prints one): w2's cut at its newline, w3's `|` printed as `/`.
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: "w1|\nw2|x\nw3|a/b\n", stderr: "" });
    expect(b.calls()).toMatch(form);
  });

  test("one named Node: read as the Node itself (kubectl gives no List for one name), its line led by the tag", () => {
    const b = forging();
    const r = b.run(renderScript("cp1", ["pk_nodes_lines '{.spec.unschedulable}' w1"]));
    expect(r.stdout).toBe("w1|\nw2|x\nw3|a/b\n");
    expect(b.calls()).toMatch(/^--kubeconfig \S+ get node w1 -o jsonpath=([0-9a-f-]{36})\{\.metadata\.name\}\1\{\.spec\.unschedulable\}\{"\\n"\}\n$/);
  });

  test("kubectl's exit status is returned (it prints the Nodes it found and exits 1 for the others)", () => {
    const b = box();
    b.stub("kubectl", `${KUBECTL_STUB_TAG}\ntagged w1 ""; echo 'Error from server (NotFound): nodes "w2" not found' >&2; exit 1`);
    const r = b.run(renderScript("cp1", ["pk_nodes_lines '{.spec.unschedulable}' w1 w2 || echo \"rc=$?\""]));
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({ stdout: "w1|\nrc=1\n", stderr: 'Error from server (NotFound): nodes "w2" not found\n' });
  });
});
