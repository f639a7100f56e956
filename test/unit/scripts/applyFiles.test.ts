/**
 * pk_apply_files / pk_restore / the kubelet script, for real in bash on temporary files:
 * compare-and-swap, timestamped backups, atomic replace, nothing repeated on a re-run, restore when the
 * kubelet turns unhealthy.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync, statSync } from "fs";
import { join } from "path";
import { upgradeScripts } from "../../../components/steps/upgrade";
import { KUBELET_JOURNAL_DIR } from "../../../components/steps/kubelet";
import { encodeFileChanges, sha256Hex } from "../../../components/scripts/files";
import { runBash, sandbox, kubeletScript } from "./bash";

function setup(kubeletHealthy: boolean) {
  const box = sandbox();
  const restarts = join(box.dir, "restarts");
  box.stub("systemctl", `case "$1" in restart) echo x >>${restarts};; is-active) ${kubeletHealthy ? "exit 0" : `[ -f ${box.dir}/healthy ]`};; status) echo "kubelet: bad config";; esac`);
  const a = join(box.dir, "a.yaml");
  const b = join(box.dir, "b.env");
  writeFileSync(a, "old: a\n");
  writeFileSync(b, "B=1\n");
  const script = kubeletScript(false);
  const run = (stdin: string) => runBash(script, { stdin, bin: box.bin, state: box.state });
  const restartCount = () => (existsSync(restarts) ? readFileSync(restarts, "utf8").split("\n").filter(Boolean).length : 0);
  return { box, a, b, run, restartCount };
}

const state = (path: string, content: string) => ({ path, sha256: sha256Hex(content), content });

test("replaces files after a backup, restarts the kubelet once, and a re-run changes nothing", () => {
  const { box, a, b, run, restartCount } = setup(true);
  const c = join(box.dir, "new.yaml");
  const stdin = encodeFileChanges([
    { path: a, expected: state(a, "old: a\n"), content: "new: a\n", mode: "0644" },
    { path: b, expected: state(b, "B=1\n"), content: undefined },
    { path: c, expected: { path: c }, content: "created\n", mode: "0600" },
  ]);
  const first = run(stdin);
  expect(first.stderr).toContain("write");
  expect(first.status).toBe(0);
  expect(first.stdout.trim()).toBe("files changed: 3; kubelet restarted and healthy");
  expect(readFileSync(a, "utf8")).toBe("new: a\n");
  expect(existsSync(b)).toBe(false);
  expect(readFileSync(c, "utf8")).toBe("created\n");
  expect(statSync(c).mode & 0o777).toBe(0o600);
  expect(restartCount()).toBe(1);
  // Backups hold the old bytes, under a timestamped folder of the kubelet step's own.
  const [stamp] = readdirSync(join(box.state, KUBELET_JOURNAL_DIR, "backup"));
  expect(stamp).toMatch(/^\d{8}T\d{6}\.\d+Z$/);
  expect(readFileSync(join(box.state, KUBELET_JOURNAL_DIR, "backup", stamp as string, a), "utf8")).toBe("old: a\n");
  expect(readFileSync(join(box.state, KUBELET_JOURNAL_DIR, "backup", stamp as string, b), "utf8")).toBe("B=1\n");
  // No temp file left beside the targets.
  expect(readdirSync(box.dir).filter((f) => f.startsWith(".pulumi-kubeadm"))).toEqual([]);
  // The same step again (a re-run): nothing changes, no restart.
  const second = run(stdin);
  expect(second.status).toBe(0);
  expect(second.stdout.trim()).toBe("files changed: 0; kubelet not restarted");
  expect(restartCount()).toBe(1);
});

test("refuses, changing nothing, when a file changed since it was read", () => {
  const { a, b, run, restartCount } = setup(true);
  const stdin = encodeFileChanges([
    { path: a, expected: state(a, "old: a\n"), content: "new: a\n" },
    { path: b, expected: state(b, "B=0\n"), content: "B=2\n" },
  ]);
  const r = run(stdin);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(`pulumi-kubeadm: node w1: ${b} changed since it was read`);
  expect(readFileSync(a, "utf8")).toBe("old: a\n");
  expect(readFileSync(b, "utf8")).toBe("B=1\n");
  expect(restartCount()).toBe(0);
});

test("an unhealthy kubelet after the change: backups restored, kubelet restarted, error names the node", () => {
  const { a, b, run, restartCount } = setup(false);
  const r = run(encodeFileChanges([{ path: a, expected: state(a, "old: a\n"), content: "broken\n" }]));
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: the kubelet was unhealthy after its files changed; the files this step changed were restored");
  expect(r.stderr).toContain("kubelet: bad config");
  expect(readFileSync(a, "utf8")).toBe("old: a\n");
  expect(readFileSync(b, "utf8")).toBe("B=1\n");
  expect(restartCount()).toBe(2);
});

test("an empty change list does nothing and does not restart the kubelet", () => {
  const { run, restartCount } = setup(true);
  const r = run("");
  expect(r.status).toBe(0);
  expect(r.stdout.trim()).toBe("files changed: 0; kubelet not restarted");
  expect(restartCount()).toBe(0);
});

test("an overwrite change (expected `any`) replaces whatever the file holds, with a backup; an equal file is left alone", () => {
  const { box, a, run, restartCount } = setup(true);
  const change = encodeFileChanges([{ path: a, expected: { path: a }, content: "wanted\n", mode: "0644", overwrite: true }]);
  expect(change.split(" ")[2]).toBe("any");
  const r = run(change);
  expect(r.status).toBe(0);
  expect(readFileSync(a, "utf8")).toBe("wanted\n");
  const [stamp] = readdirSync(join(box.state, KUBELET_JOURNAL_DIR, "backup"));
  expect(readFileSync(join(box.state, KUBELET_JOURNAL_DIR, "backup", stamp as string, a), "utf8")).toBe("old: a\n");
  expect(run(change).stdout.trim()).toBe("files changed: 0; kubelet not restarted");
  expect(restartCount()).toBe(1);
});

test("upgrade: a stale instance-config.yaml is replaced before kubeadm upgrade reads it (it would fail the old compare-and-swap)", () => {
  const box = sandbox();
  const instance = join(box.dir, "instance-config.yaml");
  writeFileSync(instance, 'containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock"\n');
  writeFileSync(join(box.state, "version"), "v1.36.0\n");
  const seen = join(box.dir, "seen-by-kubeadm");
  box.stub("kubeadm", `cat ${instance} >${seen}; exit 0`);
  box.stub("systemctl", "exit 0");
  box.stub("kubectl", "exit 1");
  const script = upgradeScripts({ node: "w1", version: "v1.37.0", apply: false, wanted: "node-local", nodeLocalCriSocket: false }).create;
  const stdin = encodeFileChanges([{ path: instance, expected: { path: instance }, content: 'containerRuntimeEndpoint: "unix:///var/run/crio/crio.sock"\n', mode: "0644", overwrite: true }]);
  const r = runBash(script, { stdin, bin: box.bin, state: box.state });
  expect(r.stderr).toContain(`pulumi-kubeadm: node w1: kubeadm upgrade node to v1.37.0 done; the kubelet follows`);
  expect(r.status).toBe(0);
  expect(readFileSync(seen, "utf8")).toBe('containerRuntimeEndpoint: "unix:///var/run/crio/crio.sock"\n');
});
