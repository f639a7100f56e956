/**
 * A rollout batch's uncordon for real in bash, against a kubectl stub over its members' Nodes: only the
 * members carrying this component's cordon mark are uncordoned and their mark removed; an operator's
 * cordon (unschedulable, no mark) stays; a member whose Node cannot be read fails the step, named.
 */
import { mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { uncordonScripts } from "../../../components/steps/uncordon";
import { runBash, withLibrary, testLibrary } from "./bash";
import { CORDONED, nodesStub } from "./nodesStub";

const WHY = "kubelet v1.33.2 -> v1.34.2";

test("uncordons only the members this component cordoned and removes their mark; an operator's cordon stays", () => {
  // w1 drained by the batch; w2 cordoned by an operator; w3 marked but schedulable (its drain failed
  // before kubectl cordoned it); w4 untouched.
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY }, w2: { unschedulable: true }, w3: { mark: WHY }, w4: {} });
  const r = runBash(uncordonScripts("cp1", ["w1", "w2", "w3", "w4"], "v1.34.2").create, { bin: c.box.bin, state: c.box.state });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  expect(r.stdout).toBe("w1: uncordoned\nw2: not cordoned by this component\nw3: uncordoned\nw4: not cordoned by this component\n");
  // One call for the unschedulable ones, then one that removes the mark from every marked one.
  expect(c.writes()).toEqual(["uncordon w1", `annotate --overwrite node w1 w3 ${CORDONED}-`]);
  expect(c.nodes()).toEqual({ w1: "|", w2: "true|", w3: "|", w4: "|" });
});

// Fails on b4b62f1: one member after another, so w1's uncordon waited for w2's to start and gave up.
test("uncordons the members side by side, their lines in members order", () => {
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY }, w2: { unschedulable: true, mark: WHY } }, { uncordonTogether: ["w1", "w2"] });
  const r = runBash(uncordonScripts("cp1", ["w1", "w2"], "v1.34.2").create, { bin: c.box.bin, state: c.box.state });
  expect(r.stderr).toBe("");
  expect(r.stdout).toBe("w1: uncordoned\nw2: uncordoned\n");
  expect(r.status).toBe(0);
  expect(c.nodes()).toEqual({ w1: "|", w2: "|" });
});

test("a member whose Node cannot be read fails the step naming it", () => {
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY } });
  const r = runBash(uncordonScripts("cp1", ["w1", "w9"], "v1.34.2").create, { bin: c.box.bin, state: c.box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("pulumi-kubeadm: node w9: cannot read the Node\n");
  expect(c.writes()).toEqual(["uncordon w1", `annotate --overwrite node w1 ${CORDONED}-`]);
  expect(r.stdout).toBe("w1: uncordoned\n");
});

test("its text holds the target version (so it runs after every rollout) and the node it runs on, not a member's own step", () => {
  const a = uncordonScripts("cp1", ["w1", "w2"], "v1.34.2").create;
  expect(uncordonScripts("cp1", ["w1", "w2"], "v1.35.0").create).not.toBe(a);
  expect(a).toContain(": rollout 'v1.34.2' on 'cp1'");
  expect(uncordonScripts("cp1", ["w1", "w2"], "v1.34.2")).toEqual({ create: a, update: a });
});

test("a batched uncordon or unmark kubectl refuses: each member done again on its own, its line as the one read gave it", () => {
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY }, w2: { unschedulable: true }, w3: { unschedulable: true, mark: WHY } }, { failBatched: true });
  const r = runBash(uncordonScripts("cp1", ["w1", "w2", "w3"], "v1.34.2").create, { bin: c.box.bin, state: c.box.state });
  expect(r.status).toBe(0);
  expect(r.stdout).toBe("w1: uncordoned\nw2: not cordoned by this component\nw3: uncordoned\n");
  expect(r.stderr).toBe("error: conflict\n");
  expect(c.writes()[0]).toBe("uncordon w1 w3");
  expect([...c.writes().slice(1)].sort()).toEqual([`annotate --overwrite node w1 ${CORDONED}-`, `annotate --overwrite node w3 ${CORDONED}-`, "uncordon w1", "uncordon w3"]);
  expect(c.nodes()).toEqual({ w1: "|", w2: "true|", w3: "|" });
});

// Fails on 91a039d (and before it): kubectl uncordon exits 0 when its patch fails, and the mark was removed
// from a Node left cordoned (from then on an operator's cordon, never uncordoned by this component), its
// line printed as uncordoned.
test("a member kubectl uncordon leaves cordoned (its patch failed, exit 0) keeps its mark and fails the step, named, without an uncordoned line", () => {
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY }, w2: { unschedulable: true, mark: WHY } }, { uncordonIgnored: ["w2"] });
  const r = runBash(uncordonScripts("cp1", ["w1", "w2"], "v1.34.2").create, { bin: c.box.bin, state: c.box.state });
  expect(r.status).toBe(1);
  expect(r.stdout).toBe("w1: uncordoned\n");
  expect(r.stderr).toContain("pulumi-kubeadm: node w2: could not uncordon the node\n");
  expect(c.nodes()).toEqual({ w1: "|", w2: `true|${WHY}` });
});

// Fails on 91a039d: an earlier read's entry stood in for a Node the later read could not read.
test("a Node read once and then unreadable is not taken from the earlier read", () => {
  const c = nodesStub({ w1: { unschedulable: true } }, { downWhile: `${"/tmp"}/pk-down-${process.pid}` });
  const down = `/tmp/pk-down-${process.pid}`;
  const r = runBash(
    withLibrary(`set -euo pipefail\nPK_NODE=cp1\nPK_LIB=x\nsource "$PK_LIB"\npk_read_seen w1\necho "first [\${seen_u[w1]-unset}]"\ntouch ${down}\npk_read_seen w1\nrm -f ${down}\necho "second [\${seen_u[w1]-unset}]"\n`, testLibrary()),
    { bin: c.box.bin, state: c.box.state },
  );
  expect(r.stdout).toBe("first [true]\nsecond [unset]\n");
  expect(r.status).toBe(0);
});

// Fails on 91a039d: its temporary folder stayed behind when the script was killed midway (no trap).
test("writes no temporary file while it runs", () => {
  const seen = `/tmp/pk-tmpseen-${process.pid}`;
  const c = nodesStub({ w1: { unschedulable: true, mark: WHY }, w2: { unschedulable: true, mark: WHY } }, { tmpSeenBy: seen, failBatched: true });
  const tmp = mkdtempSync(join(tmpdir(), "pk-tmp-"));
  const r = runBash(`export TMPDIR=${tmp}\n${uncordonScripts("cp1", ["w1", "w2"], "v1.34.2").create}`, { bin: c.box.bin, state: c.box.state });
  expect(r.status).toBe(0);
  expect(readFileSync(seen, "utf8")).toBe("");
  rmSync(seen, { force: true });
  rmSync(tmp, { recursive: true, force: true });
});
