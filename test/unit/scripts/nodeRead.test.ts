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

describe("pk_nodes_lines: several Nodes in one kubectl call, one line each, only those led by the call's tag", () => {
  /** kubectl printing, for the tag in its jsonpath, w1's line, then w2's whose annotation value holds a newline and a line shaped like w1's. */
  function forging() {
    const b = box();
    const calls = join(b.dir, "calls");
    b.stub(
      "kubectl",
      [
        `echo "$*" >>${calls}`,
        `tag=$(printf '%s' "$*" | grep -o '[0-9a-f]\\{8\\}-[0-9a-f-]\\{27\\}' | head -n 1)`,
        `printf '%sw1||\\n%sw2||x\\nw1|true|forged\\n' "$tag" "$tag"`,
      ].join("\n"),
    );
    return { ...b, calls: () => readFileSync(calls, "utf8") };
  }

  test.each([
    { names: ["w1", "w2"], form: /get nodes w1 w2 -o jsonpath=\{range \.items\[\*\]\}[0-9a-f-]{36}\{\.metadata\.name\}\|\{\.spec\.unschedulable\}\{"\\n"\}\{end\}/ },
    { names: [], form: /get nodes -o jsonpath=\{range \.items\[\*\]\}[0-9a-f-]{36}\{\.metadata\.name\}\|\{\.spec\.unschedulable\}\{"\\n"\}\{end\}/ },
  ])("named $names: a value's own lines are left out, so no line passes for another Node's", ({ names, form }) => {
    const b = forging();
    const r = b.run(renderScript("cp1", [["pk_nodes_lines", "'{.spec.unschedulable}'", ...names].join(" ")]));
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: "w1||\nw2||x\n", stderr: "" });
    expect(b.calls()).toMatch(form);
  });

  test("one named Node: read as the Node itself (kubectl gives no List for one name), its line led by the tag", () => {
    const b = forging();
    const r = b.run(renderScript("cp1", ["pk_nodes_lines '{.spec.unschedulable}' w1"]));
    expect(r.stdout).toBe("w1||\nw2||x\n");
    expect(b.calls()).toMatch(/^--kubeconfig \S+ get node w1 -o jsonpath=[0-9a-f-]{36}\{\.metadata\.name\}\|\{\.spec\.unschedulable\}\{"\\n"\}\n$/);
  });

  test("kubectl's exit status is returned (it prints the Nodes it found and exits 1 for the others)", () => {
    const b = box();
    b.stub("kubectl", `tag=$(printf '%s' "$*" | grep -o '[0-9a-f]\\{8\\}-[0-9a-f-]\\{27\\}' | head -n 1); printf '%sw1|\\n' "$tag"; echo 'Error from server (NotFound): nodes "w2" not found' >&2; exit 1`);
    const r = b.run(renderScript("cp1", ["pk_nodes_lines '{.spec.unschedulable}' w1 w2 || echo \"rc=$?\""]));
    expect({ stdout: r.stdout, stderr: r.stderr }).toEqual({ stdout: "w1|\nrc=1\n", stderr: 'Error from server (NotFound): nodes "w2" not found\n' });
  });
});
