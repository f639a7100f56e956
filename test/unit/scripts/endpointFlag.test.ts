/**
 * With NodeLocalCRISocket in effect, a --container-runtime-endpoint set outside kubeadm-flags.env (a
 * kubelet systemd drop-in, /etc/default/kubelet, /etc/sysconfig/kubelet) beats instance-config.yaml,
 * as the flag did in kubeadm 1.32: prepare, upgrade and kubelet fail naming the node and the
 * file, and change nothing. Real bash in a private mount namespace whose /etc is a copy (needs root).
 */
import { execFileSync } from "child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "fs";
import { dirname, join } from "path";
import { CRI_SOCKET_PROBE_ORDER } from "../../../components/kubeadm/criSocket";
import { prepareScripts } from "../../../components/steps/prepare";
import { upgradeScripts } from "../../../components/steps/upgrade";
import { encodeFileChanges, sha256Hex } from "../../../components/scripts/files";
import { runBash, sandbox, kubeletScript } from "./bash";

const DROP_IN = "/etc/systemd/system/kubelet.service.d/20-runtime.conf";
const CONTAINERD = "unix:///run/containerd/containerd.sock";

/** A sandbox whose scripts run with /etc replaced by a copy holding `files` (node path -> content). */
function node(files: Record<string, string>) {
  const box = sandbox();
  const etc = join(box.dir, "etc");
  execFileSync("cp", ["-a", "/etc", etc]);
  for (const [path, content] of Object.entries(files)) {
    const host = join(etc, path.replace(/^\/etc\//, ""));
    mkdirSync(dirname(host), { recursive: true });
    writeFileSync(host, content);
  }
  const calls = join(box.dir, "calls");
  box.stub("kubeadm", `echo "$*" >>${calls}; [ "$1" = version ] && echo v1.34.2; exit 0`);
  box.stub("systemctl", `echo "systemctl $*" >>${calls}; exit 0`);
  const wrap = ["unshare", "-m", "--propagation", "private", "bash", "-c", `mount --bind ${etc} /etc && exec "$0" "$@"`];
  const run = (script: string, stdin = "") => runBash(script, { stdin, bin: box.bin, state: box.state, wrap });
  const called = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []);
  return { box, run, called };
}

const refusal = (file: string) =>
  `pulumi-kubeadm: node w1: ${file} sets --container-runtime-endpoint, which beats instance-config.yaml (NodeLocalCRISocket): remove it from that file, the node's criSocket sets the endpoint; nothing was changed\n`;

describe.each([
  [DROP_IN, `[Service]\nEnvironment="KUBELET_EXTRA_ARGS=--container-runtime-endpoint=unix:///run/cri-dockerd.sock"\n`],
  ["/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--node-ip=10.0.0.4 --container-runtime-endpoint unix:///run/cri-dockerd.sock\n"],
  ["/etc/sysconfig/kubelet", "KUBELET_EXTRA_ARGS='--container-runtime-endpoint=unix:///run/cri-dockerd.sock'\n"],
])("%s sets the flag", (file, content) => {
  test("kubelet fails naming node and file, writes nothing, restarts nothing; with the gate off it goes ahead", () => {
    const { box, run, called } = node({ [file]: content });
    const target = join(box.dir, "instance-config.yaml");
    const stdin = encodeFileChanges([{ path: target, expected: { path: target }, content: `containerRuntimeEndpoint: "${CONTAINERD}"\n`, mode: "0644" }]);
    const r = run(kubeletScript(true), stdin);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(refusal(file));
    expect(existsSync(target)).toBe(false);
    expect(called()).toEqual([]);
    const legacy = run(kubeletScript(false), stdin);
    expect(legacy.status).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  });

  test("prepare and upgrade fail before anything runs", () => {
    const { box, run, called } = node({ [file]: content });
    writeFileSync(join(box.state, "version"), "v1.33.2\n"); // the node is due for an upgrade
    const prepare = prepareScripts({ node: "w1", criSocket: undefined, probeOrder: CRI_SOCKET_PROBE_ORDER, multipleMessage: { before: "", after: "" }, nodeLocalCriSocket: true, version: "v1.34.2", firstControlPlane: false });
    const p = run(prepare.create);
    expect(p.stderr).toBe(refusal(file));
    expect(p.stdout).toBe("");
    const upgrade = upgradeScripts({ node: "w1", version: "v1.34.2", apply: false, install: "echo installed", wanted: "node-local", nodeLocalCriSocket: true });
    const u = run(upgrade.create);
    expect(u.status).toBe(1);
    expect(u.stderr).toBe(refusal(file));
    expect(called()).toEqual(["version -o short"]);
    expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.33.2\n");
  });
});

test("comment lines, and the packaged kubeadm drop-in, do not count", () => {
  const { box, run } = node({
    "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf":
      "[Service]\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n",
    "/etc/default/kubelet": "# KUBELET_EXTRA_ARGS=--container-runtime-endpoint=unix:///run/cri-dockerd.sock\n  ; --container-runtime-endpoint\nKUBELET_EXTRA_ARGS=--node-ip=10.0.0.4\n",
  });
  const target = join(box.dir, "f");
  writeFileSync(target, "old\n");
  const r = run(kubeletScript(true), encodeFileChanges([{ path: target, expected: { path: target, sha256: sha256Hex("old\n"), content: "old\n" }, content: "new\n" }]));
  expect(r.stderr).toContain("pulumi-kubeadm: node w1: write");
  expect(r.status).toBe(0);
  expect(readFileSync(target, "utf8")).toBe("new\n");
});
