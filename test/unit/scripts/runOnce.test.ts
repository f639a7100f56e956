/**
 * init/join run kubeadm through pk_run_once: at most once to success, surviving a lost SSH session.
 */
import { spawn, spawnSync } from "child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "fs";
import { join } from "path";
import { joinScripts, joinStdin } from "../../../components/steps/join";
import { initScripts } from "../../../components/steps/init";
import { runBash, sandbox, sandboxed } from "./bash";

const CRIO = "unix:///var/run/crio/crio.sock";

/** The join scripts of resource `owner` (as the component names it: `<cluster>-w1-join`), sandboxed. */
function joinOf(dir: string, owner = "c-w1-join", formerOwners: string[] = []) {
  const s = joinScripts({ node: "w1", criSocket: CRIO, scope: "w1-join", owner, formerOwners, materialFrom: "c-w1-join-token" });
  return { create: sandboxed(s.create, dir), update: sandboxed(s.update as string, dir), del: sandboxed(s.delete as string, dir) };
}

/** A sandbox whose kubeadm stub runs `kubeadmBody`; with `makesNode`, its init and join leave kubelet.conf first, as kubeadm's do. */
function setup(kubeadmBody: string, makesNode = false) {
  const box = sandbox();
  const callsFile = join(box.dir, "calls");
  const k8s = join(box.dir, "k8s");
  const make = makesNode ? `case "$1" in init|join) mkdir -p ${k8s} && echo made >${k8s}/kubelet.conf ;; esac\n` : "";
  box.stub("kubeadm", `echo "$*" >>${callsFile}\n${make}${kubeadmBody}`);
  const scripts = joinOf(box.dir);
  const calls = () => (existsSync(callsFile) ? readFileSync(callsFile, "utf8").split("\n").filter(Boolean) : []);
  const count = () => calls().length;
  return { box, script: scripts.create, del: scripts.del, calls, count };
}

test("join runs kubeadm once; a re-run after success repeats nothing", () => {
  const { box, script, count } = setup("exit 0");
  const first = runBash(script, { stdin: "kind: JoinConfiguration\n", bin: box.bin, state: box.state });
  expect(first.stderr).toBe("");
  expect(first.status).toBe(0);
  expect(count()).toBe(1);
  // The config holding the token is gone once the join succeeded.
  expect(existsSync(join(box.dir, "etc", "kubeadm-join.yaml"))).toBe(false);
  const second = runBash(script, { stdin: "kind: JoinConfiguration\n", bin: box.bin, state: box.state });
  expect(second.status).toBe(0);
  expect(second.stderr).toContain("join already done, nothing to do");
  expect(count()).toBe(1);
});

test("the version the node joined at comes from the configuration's version line on stdin (the script does not name it), recorded once", () => {
  const { box, script } = setup("exit 0");
  expect(script).not.toContain("v1.34.2");
  const r = runBash(script, { stdin: `${joinStdin(undefined, "v1.34.2", "kind: JoinConfiguration\n")}`, bin: box.bin, state: box.state });
  expect(r.status).toBe(0);
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.34.2\n");
  // A configuration without the line (recorded by an older version) records nothing.
  const other = setup("exit 0");
  expect(runBash(other.script, { stdin: "kind: JoinConfiguration\n", bin: other.box.bin, state: other.box.state }).status).toBe(0);
  expect(existsSync(join(other.box.state, "version"))).toBe(false);
});

test("a failed kubeadm fails the step with its log (tokens masked); a re-run resets with the node's socket, then tries again", () => {
  const { box, script, calls } = setup(`[ "$1" = reset ] && exit 0; echo "error: token abcdef.0123456789abcdef expired" >&2; exit 3`);
  const r = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("error: token <bootstrap-token> expired");
  expect(r.stderr).not.toContain("abcdef.0123456789abcdef");
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: join failed (exit 3)");
  const again = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(again.stderr).toContain("pulumi-kubeadm: node w1: the last kubeadm join failed; kubeadm reset before trying again\n");
  const config = `--config ${join(box.dir, "etc", "kubeadm-join.yaml")}`;
  expect(calls()).toEqual([`join ${config}`, `reset -f --cri-socket ${CRIO}`, `join ${config}`]);
});

test("a node that held kubeadm state before the first attempt (another cluster's) is never reset by a retry", () => {
  const { box, script, calls } = setup("exit 1");
  mkdirSync(join(box.dir, "k8s"), { recursive: true });
  writeFileSync(join(box.dir, "k8s", "kubelet.conf"), "someone else's\n");
  runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([]);
  expect(calls()).toHaveLength(2);
});

test("delete: kubeadm reset with the node's socket, only where this resource made the node", () => {
  const { box, script, del, calls } = setup("exit 0");
  // Nothing made here by this resource: no reset, even with kubeadm state on the node.
  mkdirSync(join(box.dir, "k8s"), { recursive: true });
  writeFileSync(join(box.dir, "k8s", "kubelet.conf"), "x\n");
  const skipped = runBash(del, { bin: box.bin, state: box.state });
  expect(skipped.status).toBe(0);
  expect(skipped.stderr).toContain("pulumi-kubeadm: node w1: c-w1-join holds no claim on w1-join here");
  expect(calls()).toEqual([]);
  // Made by it: its delete resets, once.
  expect(runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state }).status).toBe(0);
  expect(runBash(del, { bin: box.bin, state: box.state }).status).toBe(0);
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([`reset -f --cri-socket ${CRIO}`]);
  expect(runBash(del, { bin: box.bin, state: box.state }).status).toBe(0);
  expect(calls().filter((c) => c.startsWith("reset"))).toHaveLength(1);
});

test("a replacement made before the old resource's delete (pulumi up --replace): the old delete resets nothing, the last one does", () => {
  const { box, script, del, calls } = setup("exit 0", true);
  const run = (s: string) => runBash(s, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(run(script).status).toBe(0);
  // The engine creates the replacement (same name, same scripts): the node is already joined.
  const replacement = run(script);
  expect(replacement.status).toBe(0);
  expect(replacement.stderr).toContain("join already done, nothing to do");
  // Then deletes the replaced one: still claimed by the replacement.
  const old = run(del);
  expect(old.status).toBe(0);
  expect(old.stderr).toContain("w1-join is still claimed by c-w1-join; nothing done");
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([]);
  // An update of the remaining resource adds no claim; its destroy resets.
  expect(run(joinOf(box.dir).update).status).toBe(0);
  expect(run(del).status).toBe(0);
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([`reset -f --cri-socket ${CRIO}`]);
});

test("a renamed resource (new cluster name) takes the node over: the old name's delete resets nothing", () => {
  const { box, script, calls } = setup("exit 0");
  const run = (s: string) => runBash(s, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(run(script).status).toBe(0);
  const renamed = joinOf(box.dir, "prod-w1-join");
  expect(run(renamed.create).status).toBe(0);
  const old = run(joinOf(box.dir).del);
  expect(old.stderr).toContain("w1-join is still claimed by prod-w1-join; nothing done");
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([]);
  expect(run(renamed.del).status).toBe(0);
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([`reset -f --cri-socket ${CRIO}`]);
});

test("a rename with an alias (the same resource, a new name): its update takes over the old name's claim, and its destroy resets", () => {
  const { box, script, calls } = setup("exit 0", true);
  const run = (s: string) => runBash(s, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(run(script).status).toBe(0);
  const aliased = joinOf(box.dir, "prod-w1-join", ["c-w1-join"]);
  expect(run(aliased.update).status).toBe(0);
  expect(readFileSync(join(box.state, "owners", "w1-join"), "utf8")).toBe("prod-w1-join\n");
  expect(run(aliased.del).status).toBe(0);
  expect(calls().filter((c) => c.startsWith("reset"))).toEqual([`reset -f --cri-socket ${CRIO}`]);
});

test("a new attempt with expired join material fails before kubeadm runs, naming the join-token resource", () => {
  const { box, script, count } = setup("exit 0");
  const stale = `# pulumi-kubeadm: join material valid until ${Math.floor(Date.now() / 1000) - 5}\nkind: JoinConfiguration\n`;
  const r = runBash(script, { stdin: stale, bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/pulumi-kubeadm: node w1: the join material expired at \d{4}-\d\d-\d\dT.*pulumi up --replace <the URN of c-w1-join-token>/);
  expect(count()).toBe(0);
  const fresh = `# pulumi-kubeadm: join material valid until ${Math.floor(Date.now() / 1000) + 600}\nkind: JoinConfiguration\n`;
  expect(runBash(script, { stdin: fresh, bin: box.bin, state: box.state }).status).toBe(0);
  expect(count()).toBe(1);
});

test("a session killed mid-join: kubeadm carries on detached, and the re-run waits for it (the node half-joined, not reset) instead of joining again", async () => {
  const { box, script, count } = setup(`sleep 1.5; exit 0`, true);
  const env = { ...process.env, PATH: `${box.bin}:${process.env.PATH}` };
  const text = script.replace(/^PK_STATE_DIR=.*$/m, `PK_STATE_DIR=${box.state}`);
  const session = spawn("bash", ["-c", text], { env, stdio: ["pipe", "pipe", "pipe"] });
  session.stdin.end("x: 1\n");
  await new Promise((r) => setTimeout(r, 500));
  session.kill("SIGKILL");
  await new Promise((r) => session.on("exit", r));
  expect(count()).toBe(1);
  const rerun = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(rerun.stderr).toContain("join still running from an earlier connection; waiting");
  expect(rerun.status).toBe(0);
  expect(count()).toBe(1);
});

test("kubeadm killed mid-join after it left kubeadm state: the run records it as killed; the re-run resets the node, which was clean before, then joins", () => {
  // The first join leaves kubelet.conf, then its runner and itself are killed: no exit status is written.
  const once = join(sandbox().dir, "once");
  const { box, script, calls } = setup(
    `[ "$1" = reset ] && exit 0\nif [ -f ${once} ]; then exit 0; fi\ntouch ${once}\nkill -9 $PPID; kill -9 $$`,
    true,
  );
  const first = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect({ status: first.status, calls: calls().map((c) => c.split(" ")[0]) }).toEqual({ status: 1, calls: ["join"] });
  expect(first.stderr).toContain("join was killed before it finished");
  expect(readFileSync(join(box.state, "run", "join", "rc"), "utf8")).toBe("killed\n");
  const again = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect({ status: again.status, calls: calls().map((c) => c.split(" ")[0]) }).toEqual({ status: 0, calls: ["join", "reset", "join"] });
  expect(again.stderr).toContain("pulumi-kubeadm: node w1: the last kubeadm join did not finish (its process is gone: killed, or the machine restarted); kubeadm reset before trying again");
});

/**
 * A node where an earlier create of join started kubeadm (the node was clean before it: `clean-before`)
 * and left kubelet.conf, its run record as `record` gives it (file name to content; null: no such file).
 */
function leftBehind(record: Record<string, string>) {
  const s = setup(`exit 0`, true);
  const run = join(s.box.state, "run", "join");
  mkdirSync(run, { recursive: true });
  writeFileSync(join(run, "clean-before"), "");
  for (const [f, text] of Object.entries(record)) writeFileSync(join(run, f), text);
  mkdirSync(join(s.box.dir, "k8s"), { recursive: true });
  writeFileSync(join(s.box.dir, "k8s", "kubelet.conf"), "half\n");
  return s;
}

/** A pid record of a process that has exited (its pid, and a start time no process of that pid has). */
function deadRecord(): string {
  const gone = spawnSync("true");
  return `${gone.pid} 1\n`;
}

test.each([
  ["its process gone (a stale pid record: the session died with it)", ["reset", "join"], () => ({ pid: deadRecord() }), "create"],
  ["the pid reused by another process (same pid, another start time)", ["reset", "join"], () => ({ pid: "1 0\n" }), "create"],
  ["a pid record without a start time (an older version's) whose pid another process has", ["reset", "join"], () => ({ pid: "1\n" }), "create"],
  ["no pid record (the session died before writing it: kubeadm may still run)", ["join"], () => ({}), "create"],
  ["an empty pid record (read while being written)", ["join"], () => ({ pid: "" }), "create"],
  ["its exit status 0 written but not renamed (the run died right after kubeadm succeeded)", [], () => ({ pid: deadRecord(), "rc.tmp": "0\n" }), "create"],
  ["its process gone, on an update (the stack recorded the create as done: a lost record, not a half-made node)", ["join"], () => ({ pid: deadRecord() }), "update"],
] as Array<[string, string[], () => Record<string, string>, "create" | "update"]>)("a half-joined node whose earlier kubeadm join left no exit status, %s: kubeadm runs %j", (_what, expected, record, which) => {
  const { box, calls } = leftBehind(record());
  const scripts = joinOf(box.dir);
  const r = runBash(which === "create" ? scripts.create : scripts.update, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(calls().map((c) => c.split(" ")[0])).toEqual(expected);
  expect(r.stderr.includes("kubeadm reset before trying again")).toBe(expected[0] === "reset");
});

// An update of init or join runs only where its create succeeded (a failed create is not recorded). On a
// node with no record of that run (another machine at the node's host) or whose run succeeded but which
// has no kubeadm state (reset by hand) it ran kubeadm again: a second, separate cluster for init; the
// machine registered under the old Node's name for join. Refused now, before anything changes, naming
// what to do.
test("an update of join or init on a node without the record of its run, or reset by hand, is refused before kubeadm runs, saying what to do", () => {
  const { box, calls } = setup("exit 0", true);
  const refusal =
    "pulumi-kubeadm: node w1: the stack records kubeadm join for this node (or keeps it for a node written off with gone: true), but the node has no record of that run (another machine at its host) or no kubeadm state (reset by hand). Nothing was changed: a second kubeadm join would register this machine under the old Node's name. To put a new machine under this name: remove the node from nodes and pulumi up (first, for a worker whose old machine is unreachable, set gone: true and pulumi up; a control-plane node's old etcd member must be removed by hand first, etcdctl member remove on another control-plane node), then add it back: it joins as a new node, with fresh join material\n";
  const update = () => runBash(joinOf(box.dir).update, { stdin: "kind: JoinConfiguration\n", bin: box.bin, state: box.state });
  // Another machine: no record of the run, no kubeadm state.
  const fresh = update();
  expect({ status: fresh.status, stdout: fresh.stdout, stderr: fresh.stderr, calls: calls() }).toEqual({ status: 1, stdout: "", stderr: refusal, calls: [] });
  const init = initScripts({ node: "cp1", criSocket: CRIO, scope: "cp1-init", owner: "c-cp1-init" });
  const made = runBash(sandboxed(init.update as string, box.dir), { stdin: "kind: InitConfiguration\n", bin: box.bin, state: box.state });
  expect({ status: made.status, calls: calls() }).toEqual({ status: 1, calls: [] });
  expect(made.stderr).toContain("pulumi-kubeadm: node cp1: the stack records kubeadm init for this node");
  expect(made.stderr).toContain("a second kubeadm init would make a new, separate cluster");
  // Another machine that holds kubeadm state (another cluster's node): no record of the run either.
  const other = sandbox();
  mkdirSync(join(other.dir, "k8s"), { recursive: true });
  writeFileSync(join(other.dir, "k8s", "kubelet.conf"), "x\n");
  other.stub("kubeadm", `echo "$*" >>${join(other.dir, "calls")}`);
  const elsewhere = runBash(joinOf(other.dir).update, { stdin: "kind: JoinConfiguration\n", bin: other.bin, state: other.state });
  expect({ status: elsewhere.status, stderr: elsewhere.stderr, ran: existsSync(join(other.dir, "calls")) }).toEqual({ status: 1, stderr: refusal, ran: false });
  // The node this step made: its create runs kubeadm; an update after it finds its run and repeats nothing.
  expect(runBash(joinOf(box.dir).create, { stdin: "kind: JoinConfiguration\n", bin: box.bin, state: box.state }).status).toBe(0);
  const again = update();
  expect({ status: again.status, calls: calls() }).toEqual({ status: 0, calls: [expect.stringMatching(/^join --config /)] });
  expect(again.stderr).toContain("join already done, nothing to do");
  // The same node after `kubeadm reset` by hand (which leaves this package's record): refused.
  rmSync(join(box.dir, "k8s", "kubelet.conf"));
  const reset = update();
  expect({ status: reset.status, stderr: reset.stderr, calls: calls().length }).toEqual({ status: 1, stderr: refusal, calls: 1 });
});
