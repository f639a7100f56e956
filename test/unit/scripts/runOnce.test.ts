/**
 * init/join run kubeadm through pk_run_once: at most once to success, surviving a lost SSH session.
 */
import { spawn } from "child_process";
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { joinScripts } from "../../../components/scripts/kubeadmRun";
import { runBash, sandbox } from "./bash";

function setup(kubeadmBody: string) {
  const box = sandbox();
  const calls = join(box.dir, "calls");
  box.stub("kubeadm", `echo "$*" >>${calls}\n${kubeadmBody}`);
  // The real script writes /etc/kubernetes/pulumi-kubeadm and /var/lib/kubelet; point them at the sandbox.
  const script = joinScripts("w1")
    .create.split("/etc/kubernetes/pulumi-kubeadm").join(join(box.dir, "etc"))
    .split("/var/lib/kubelet").join(join(box.dir, "kubelet"));
  const count = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean).length : 0);
  return { box, script, count };
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

test("a failed kubeadm fails the step with its log (tokens masked), and a re-run tries again", () => {
  const { box, script, count } = setup(`echo "error: token abcdef.0123456789abcdef expired" >&2; exit 3`);
  const r = runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("error: token <bootstrap-token> expired");
  expect(r.stderr).not.toContain("abcdef.0123456789abcdef");
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: join failed (exit 3)");
  runBash(script, { stdin: "x: 1\n", bin: box.bin, state: box.state });
  expect(count()).toBe(2);
});

test("a session killed mid-join: kubeadm carries on detached, and the re-run waits for it instead of joining again", async () => {
  const { box, script, count } = setup(`sleep 1.5; exit 0`);
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
