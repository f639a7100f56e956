/**
 * Node scripts re-run after a failure midway (found by a review): the kubelet is restarted and checked
 * even when the session died after the files were replaced; a reused pid never makes a step wait.
 * DESIGN.md: "a re-run after a failure midway finishes the work and repeats nothing".
 */
import { existsSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { spawn } from "child_process";
import { initScripts } from "../../../components/steps/init";
import { KUBELET_JOURNAL_DIR } from "../../../components/steps/kubelet";
import { encodeFileChanges, sha256Hex } from "../../../components/scripts/files";
import { runBash, sandbox, kubeletScript, sandboxed } from "./bash";

const state = (path: string, content: string) => ({ path, sha256: sha256Hex(content), content });

test("kubelet: the session dies after the files were replaced but before the kubelet restart; the re-run must still restart and health-check the kubelet", () => {
  const box = sandbox();
  const restarts = join(box.dir, "restarts");
  const diedOnce = join(box.dir, "died-once");
  // First `systemctl daemon-reload` (the first thing pk_kubelet_healthy does): the session is lost
  // (the SSH connection drops / the engine is interrupted) -- the script dies right there.
  box.stub(
    "systemctl",
    `case "$1" in daemon-reload) if [ ! -f ${diedOnce} ]; then touch ${diedOnce}; kill -9 $PPID; fi;; restart) echo x >>${restarts};; is-active) exit 0;; esac`,
  );
  const a = join(box.dir, "config.yaml");
  writeFileSync(a, "old\n");
  const script = kubeletScript(false);
  const stdin = encodeFileChanges([{ path: a, expected: state(a, "old\n"), content: "new\n", mode: "0644" }]);

  const first = runBash(script, { stdin, bin: box.bin, state: box.state });
  expect(first.status).not.toBe(0); // the step failed: the next `up` runs it again
  expect(readFileSync(a, "utf8")).toBe("new\n"); // ...with the file already replaced
  expect(existsSync(restarts)).toBe(false); // ...and the kubelet still running the OLD config

  const second = runBash(script, { stdin, bin: box.bin, state: box.state });
  expect(second.status).toBe(0);
  // The re-run restarts and checks the kubelet: the first run never did.
  expect(existsSync(restarts) ? readFileSync(restarts, "utf8").trim().split("\n").length : 0).toBe(1);
});

test("kubelet: the session dies between two file replacements; the re-run, with the same (now partly stale) snapshot, skips the file already replaced, replaces the other, and restarts the kubelet once", () => {
  const box = sandbox();
  const restarts = join(box.dir, "restarts");
  const syncs = join(box.dir, "syncs");
  box.stub("systemctl", `case "$1" in restart) echo x >>${restarts};; is-active) exit 0;; esac`);
  // The second temp file's sync (the second file's write, before its rename): the session is lost there.
  box.stub("sync", `case "$1" in */.pulumi-kubeadm.*) echo x >>${syncs}; if [ "$(wc -l <${syncs})" = 2 ] && [ ! -f ${syncs}.died ]; then touch ${syncs}.died; kill -9 $PPID; fi;; esac`);
  const a = join(box.dir, "config.yaml");
  const b = join(box.dir, "kubeadm-flags.env");
  writeFileSync(a, "old\n");
  writeFileSync(b, "B=1\n");
  const stdin = encodeFileChanges([
    { path: a, expected: state(a, "old\n"), content: "new\n", mode: "0644" },
    { path: b, expected: state(b, "B=1\n"), content: "B=2\n", mode: "0644" },
  ]);
  const first = runBash(kubeletScript(false), { stdin, bin: box.bin, state: box.state });
  expect(first.status).not.toBe(0);
  expect([readFileSync(a, "utf8"), readFileSync(b, "utf8")]).toEqual(["new\n", "B=1\n"]);
  expect(existsSync(restarts)).toBe(false);

  const second = runBash(kubeletScript(false), { stdin, bin: box.bin, state: box.state });
  expect(second.status).toBe(0);
  // Its line says the kubelet restarted (a file change, no new kubelet), as an upgrade's says so.
  expect(second.stdout).toBe("files changed: 1; kubelet restarted and healthy\n");
  expect([readFileSync(a, "utf8"), readFileSync(b, "utf8")]).toEqual(["new\n", "B=2\n"]);
  expect(readFileSync(restarts, "utf8")).toBe("x\n");
  expect(existsSync(join(box.state, KUBELET_JOURNAL_DIR, "pending"))).toBe(false);
});

test("pk_run_once: a recorded pid reused by an unrelated process (node rebooted mid-init) must not make the step wait forever", async () => {
  const box = sandbox();
  box.stub("kubeadm", `exit 0`);
  // Simulate: init was started, the node rebooted before it wrote rc; after the reboot an unrelated
  // long-lived process got the same pid.
  const unrelated = spawn("sleep", ["600"], { stdio: "ignore" });
  const { mkdirSync } = await import("fs");
  mkdirSync(join(box.state, "run", "init"), { recursive: true });
  writeFileSync(join(box.state, "run", "init", "pid"), `${unrelated.pid}\n`);
  const init = initScripts({ node: "cp1", criSocket: "unix:///run/containerd/containerd.sock", scope: "cp1-init", owner: "c-cp1-init" }).create;
  const script = sandboxed(init, box.dir, (t) => t.split("/etc/kubernetes/pulumi-kubeadm").join(join(box.dir, "cfg")));
  const started = Date.now();
  const r = runBash(script.replace(/^set -euo pipefail$/m, "set -euo pipefail; TMOUT=1"), {
    stdin: "x: y\n",
    bin: box.bin,
    state: box.state,
    // A guard far below the unrelated process's 600 s (what waiting on it would take), far above a busy
    // machine's time for the script.
    wrap: ["timeout", "120"],
  });
  unrelated.kill();
  // Not "still running ... waiting" on the unrelated process: init starts again and finishes.
  expect(r.stderr).not.toContain("still running from an earlier connection");
  expect(r.status).toBe(0);
  expect(Date.now() - started).toBeLessThan(120000);
}, 180000);
