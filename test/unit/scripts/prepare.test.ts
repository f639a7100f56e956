/**
 * The prepare script detects the CRI socket exactly as kubeadm does (same probe list and order; several
 * sockets fail with kubeadm's message naming the node). Runs for real in bash inside a private mount
 * namespace with an empty tmpfs on /run, where the test creates real unix sockets (needs root).
 */
import { CRI_SOCKET_PROBE_ORDER, multipleCriEndpointsMessage } from "../../../components/kubeadm/criSocket";
import { prepareScripts } from "../../../components/steps/prepare";
import { runBash, sandbox } from "./bash";

const LIST = "\u0000";
const [before = "", after = ""] = multipleCriEndpointsMessage([LIST]).split(LIST);

/** Run prepare for `criSocket` on a node whose /run holds sockets at `sockets` (paths under /run). */
function prepare(sockets: string[], criSocket?: string) {
  const box = sandbox();
  box.stub("kubeadm", `echo v1.34.1`);
  box.stub("kubelet", `[ "$1" = --version ] && echo "Kubernetes v1.33.5"`);
  const script = prepareScripts({ node: "w2", criSocket, probeOrder: CRI_SOCKET_PROBE_ORDER, multipleMessage: { before, after }, nodeLocalCriSocket: false, version: "v1.34.1", firstControlPlane: false }).create;
  const make = sockets
    .map((s) => `mkdir -p "$(dirname ${s})" && python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' ${s}`)
    .join(" && ");
  const setupRun = `mount -t tmpfs tmpfs /run${make ? ` && ${make}` : ""} && exec "$0" "$@"`;
  return runBash(script, { bin: box.bin, state: box.state, wrap: ["unshare", "-m", "--propagation", "private", "bash", "-c", setupRun] });
}

const containerd = "unix:///var/run/containerd/containerd.sock";
const crio = "unix:///var/run/crio/crio.sock";

test("one socket: detected and reported with kubeadm's version", () => {
  const r = prepare(["/run/crio/crio.sock"]);
  expect(r.stderr).toBe("");
  // With the installed versions.
  expect(r.stdout).toBe(`criSocket=${crio}\nkubeadmVersion=v1.34.1\nkubeletVersion=v1.33.5\njoined=no\n`);
});

test("several sockets and none declared: kubeadm's error, naming the node and both sockets", () => {
  const r = prepare(["/run/containerd/containerd.sock", "/run/crio/crio.sock"]);
  expect(r.status).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe(`pulumi-kubeadm: node w2: ${multipleCriEndpointsMessage([containerd, crio])}\n`);
});

test("several sockets and one declared: the declared one, no error", () => {
  const r = prepare(["/run/containerd/containerd.sock", "/run/crio/crio.sock"], crio);
  // With the installed versions.
  expect(r.stdout).toBe(`criSocket=${crio}\nkubeadmVersion=v1.34.1\nkubeletVersion=v1.33.5\njoined=no\n`);
});

test("a declared socket that does not exist fails naming the node and the path", () => {
  const r = prepare(["/run/containerd/containerd.sock"], crio);
  expect(r.status).toBe(1);
  expect(r.stderr).toBe(`pulumi-kubeadm: node w2: criSocket: no CRI socket at /var/run/crio/crio.sock (declared ${crio})\n`);
});

test("no socket at all fails naming the node and kubeadm's probe list", () => {
  const r = prepare([]);
  expect(r.status).toBe(1);
  expect(r.stderr).toContain(`pulumi-kubeadm: node w2: criSocket: none set and no CRI socket found (kubeadm probes: ${CRI_SOCKET_PROBE_ORDER.join(", ")})`);
});

test("kubeadm missing fails naming the node", () => {
  const box = sandbox();
  const script = prepareScripts({ node: "w2", probeOrder: CRI_SOCKET_PROBE_ORDER, multipleMessage: { before, after }, nodeLocalCriSocket: false, version: "v1.34.1", firstControlPlane: false }).create;
  const r = runBash(script.replace("command -v kubeadm", "command -v kubeadm-not-installed-here"), { bin: box.bin, state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^pulumi-kubeadm: node w2: kubeadm is not installed/);
});
