/**
 * The lab's nodes (test/lab/nodes/): real sshd per node in a private mount namespace, runtime
 * sockets, host key pinning, one node's sshd stopped and started, down. Runs as root.
 * Uses its own lab folder and addresses 127.0.0.201-203, so a developer's running lab is untouched.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import {
  LabInfo,
  LabSpec,
  NodeInfo,
  labProcesses,
  readNodeFile,
  runOnNode,
  startLab,
  startNodeSshd,
  stopLab,
  stopNodeSshd,
} from "./nodes";
import { isAlive } from "./nodes/procs";

jest.setTimeout(60000);

const labDir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-nodes-test-"));
const spec: LabSpec = {
  version: "v1.31.4",
  nodes: [
    { name: "alpha", address: "127.0.0.201", port: 22, runtimes: ["containerd"] },
    { name: "beta", address: "127.0.0.202", port: 22, runtimes: ["crio", "cri-dockerd"] },
    { name: "gamma", address: "127.0.0.203", port: 22, runtimes: [] },
  ],
};
const SOCKETS = {
  containerd: "/run/containerd/containerd.sock",
  crio: "/var/run/crio/crio.sock",
  "cri-dockerd": "/run/cri-dockerd.sock",
};
let lab: LabInfo;

const run = (node: string, cmd: string, stdin?: string) => runOnNode(node, cmd, stdin, { labDir });
/** Polls `ready` every 20 ms until it holds (bounded by the test's own limit, not by a clock of its own). */
const until = async (ready: () => boolean): Promise<void> => {
  while (!ready()) await new Promise((r) => setTimeout(r, 20));
};

/** Connects to a unix socket; resolves true when the connection opens. */
function canConnect(sock: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    c.on("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
}

beforeAll(async () => {
  lab = await startLab({ spec, labDir, ifRunning: "replace" });
});

afterAll(async () => {
  if (fs.existsSync(labDir)) await stopLab({ labDir });
});

test("up starts every node with a recorded host key and its pids", () => {
  expect(lab.reused).toBe(false);
  expect(lab.nodes.map((n) => [n.name, n.address, n.port])).toEqual([
    ["alpha", "127.0.0.201", 22],
    ["beta", "127.0.0.202", 22],
    ["gamma", "127.0.0.203", 22],
  ]);
  for (const n of lab.nodes) {
    expect(n.hostKey).toMatch(/^ssh-ed25519 AAAA[A-Za-z0-9+/]+=*$/);
    expect(n.pids).toEqual([n.holderPid, n.sshdPid]);
    for (const p of n.pids) expect(isAlive(p, n.startTimes[p])).toBe(true);
    // what sshd presents is what node.json records
    const scanned = execFileSync("ssh-keyscan", ["-t", "ed25519", n.address], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    expect(scanned.trim()).toBe(`${n.address} ${n.hostKey}`);
  }
  expect(new Set(lab.nodes.map((n) => n.mountNamespace)).size).toBe(3);
  expect(JSON.parse(fs.readFileSync(path.join(labDir, "config.json"), "utf8"))).toMatchObject({ tokenTtlSeconds: 86400 });
  expect(fs.readdirSync(path.join(labDir, "cluster"))).toEqual([]);
  expect(fs.readFileSync(path.join(labDir, "ssh", "known_hosts"), "utf8")).toContain(`127.0.0.202 ${lab.nodes[1]?.hostKey}`);
});

test("each node has its version file and the bundled stand-ins first on root's PATH", async () => {
  for (const n of spec.nodes) {
    const r = await run(n.name, "cat /etc/lab-node/kubeadm-version; command -v kubeadm kubectl systemctl; kubeadm version -o short; cat /usr/local/sbin/kubeadm");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.slice(0, 5)).toEqual(["v1.31.4", "/usr/local/sbin/kubeadm", "/usr/local/sbin/kubectl", "/usr/local/sbin/systemctl", "v1.31.4"]);
    expect(r.stdout).toContain(
      `exec env LAB_DIR='${labDir}' LAB_NODE='${n.name}' '${process.execPath}' '${labDir}/standin/kubeadm.js' "$@"`,
    );
  }
});

test("stdin reaches the command and exit codes come back", async () => {
  const r = await run("alpha", "cat > /etc/kubernetes/from-stdin; cat /etc/kubernetes/from-stdin; exit 7", "secret\n");
  expect(r).toEqual({ code: 7, stdout: "secret\n", stderr: "" });
});

test("a node sees only its own files; the host sees none of them", async () => {
  expect((await run("alpha", "echo alpha-data > /var/lib/kubelet/marker && echo a > /var/lib/etcd/m && cat /var/lib/kubelet/marker")).stdout).toBe("alpha-data\n");
  const beta = await run("beta", "ls -A /var/lib/kubelet /var/lib/etcd; test -e /var/lib/kubelet/marker && echo LEAK || echo absent");
  expect(beta.stdout).toBe("/var/lib/etcd:\n\n/var/lib/kubelet:\nabsent\n");
  expect(fs.existsSync("/var/lib/kubelet/marker")).toBe(false);
  expect(fs.existsSync("/etc/kubernetes/from-stdin")).toBe(false);
  // it is in alpha's folder on the host
  expect(fs.readFileSync(path.join(labDir, "nodes", "alpha", "root", "var", "lib", "kubelet", "marker"), "utf8")).toBe("alpha-data\n");
});

test("runtime sockets exist only where configured, and accept connections", async () => {
  const script = Object.entries(SOCKETS)
    .map(([r, s]) => `test -S ${s} && echo ${r}=yes || echo ${r}=no`)
    .join("; ");
  const want: Record<string, string> = {
    alpha: "containerd=yes\ncrio=no\ncri-dockerd=no\n",
    beta: "containerd=no\ncrio=yes\ncri-dockerd=yes\n",
    gamma: "containerd=no\ncrio=no\ncri-dockerd=no\n",
  };
  for (const n of spec.nodes) expect((await run(n.name, script)).stdout).toBe(want[n.name]);
  // connecting from inside the node
  const connect = `${process.execPath} -e "require('net').connect('/run/crio/crio.sock').on('connect',()=>{console.log('connected');process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(1)})"`;
  expect(await run("beta", connect)).toMatchObject({ code: 0, stdout: "connected\n" });
  expect(await run("alpha", connect)).toMatchObject({ code: 1, stdout: "ENOENT\n" });
  // and through the node's folder on the host
  expect(await canConnect(path.join(labDir, "nodes", "alpha", "root", "run", "containerd", "containerd.sock"))).toBe(true);
  expect(fs.existsSync("/run/containerd/containerd.sock")).toBe(false);
});

test("host key pinning: a wrong pinned key is refused, the recorded one accepted", async () => {
  const [alpha, beta] = lab.nodes as [NodeInfo, NodeInfo];
  const wrong = await runOnNode("alpha", "echo should-not-run", undefined, { labDir, hostKey: beta.hostKey });
  expect(wrong.code).toBe(255);
  expect(wrong.stdout).toBe("");
  expect(wrong.stderr).toMatch(/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
  const right = await runOnNode("alpha", "echo ok", undefined, { labDir, hostKey: alpha.hostKey });
  expect(right).toEqual({ code: 0, stdout: "ok\n", stderr: "" });
});

test("one node's sshd killed mid-session, then started again", async () => {
  const before = readNodeFile(labDir, "gamma");
  const long = run("gamma", "touch /root/session-started; sleep 30; echo finished");
  // The session is on the node once its mark is (no fixed wait: a busy machine takes longer to connect).
  await until(() => fs.existsSync(path.join(labDir, "nodes", "gamma", "root", "root", "session-started")));
  const stopped = await stopNodeSshd("gamma", { labDir });
  const cut = await long;
  expect(cut.code).toBe(255);
  expect(cut.stdout).not.toContain("finished");
  expect(stopped.sshdPid).toBeNull();
  expect(stopped.pids).toEqual([before.holderPid]);
  expect(isAlive(before.sshdPid as number)).toBe(false);
  expect((await run("gamma", "true")).code).toBe(255);
  expect((await run("alpha", "echo still")).stdout).toBe("still\n");

  const back = await startNodeSshd("gamma", { labDir });
  expect(back.sshdPid).not.toBe(before.sshdPid);
  expect(back.pids).toEqual([before.holderPid, back.sshdPid]);
  expect(back.hostKey).toBe(before.hostKey);
  expect(await run("gamma", "cat /etc/lab-node/kubeadm-version")).toEqual({ code: 0, stdout: "v1.31.4\n", stderr: "" });
  // the benchmark counts sessions from each node's log
  expect(fs.readFileSync(path.join(labDir, "nodes", "gamma", "sshd.log"), "utf8")).toMatch(/Accepted publickey for root from 127\.0\.0\.1/);
});

test("up again reuses a running lab with the same nodes and refuses a different one", async () => {
  const again = await startLab({ spec, labDir });
  expect(again.reused).toBe(true);
  expect(again.nodes.map((n) => n.pids)).toEqual(spec.nodes.map((n) => readNodeFile(labDir, n.name).pids));
  await expect(startLab({ spec: { ...spec, nodes: spec.nodes.slice(0, 2) }, labDir })).rejects.toThrow(/already running.*down/);
});

test("up after a crash cleans the dead lab's leftovers and starts anew", async () => {
  const old = spec.nodes.map((n) => readNodeFile(labDir, n.name));
  // the lab's processes die without `down`: node.json, sockets and files stay behind
  for (const n of old) for (const p of n.pids) process.kill(p, "SIGKILL");
  for (const n of old) for (const p of n.pids) while (isAlive(p)) await new Promise((r) => setTimeout(r, 10));
  expect(fs.existsSync(path.join(labDir, "nodes", "alpha", "root", "var", "lib", "kubelet", "marker"))).toBe(true);
  lab = await startLab({ spec, labDir });
  expect(lab.reused).toBe(false);
  for (const n of lab.nodes) expect(old.map((o) => o.holderPid)).not.toContain(n.holderPid);
  expect(fs.existsSync(path.join(labDir, "nodes", "alpha", "root", "var", "lib", "kubelet", "marker"))).toBe(false);
  expect((await run("beta", "test -S /run/crio/crio.sock && echo yes")).stdout).toBe("yes\n");
});

test("down stops every lab process and removes the lab folder", async () => {
  const pids = lab.nodes.flatMap((n) => n.pids);
  const session = run("alpha", "touch /root/session-started; sleep 30");
  await until(() => fs.existsSync(path.join(labDir, "nodes", "alpha", "root", "root", "session-started")));
  expect(labProcesses(labDir).length).toBeGreaterThan(pids.length); // the session's processes too
  const { stopped } = await stopLab({ labDir });
  expect(stopped).toEqual(expect.arrayContaining(pids));
  expect((await session).code).toBe(255);
  for (const p of pids) expect(isAlive(p)).toBe(false);
  expect(labProcesses(labDir)).toEqual([]);
  const ps = execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" });
  expect(ps.split("\n").filter((l) => !l.startsWith("Z") && l.includes(labDir))).toEqual([]);
  expect(fs.existsSync(labDir)).toBe(false);
  for (const n of spec.nodes) expect(await canConnect(path.join(labDir, "nodes", n.name, "root", "run", "containerd", "containerd.sock"))).toBe(false);
});
