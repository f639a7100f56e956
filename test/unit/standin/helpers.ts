/**
 * Test helpers for the lab's kubeadm stand-in (a TEST DOUBLE, not real kubeadm): temporary
 * LAB_DIR and per-node LAB_ROOTs, real listening unix sockets for runtimes, and the stand-ins bundled
 * once per Lab and run by node, exactly as the lab's node wrappers run them (a tsx process per call cost
 * 0.4 to 0.7 s on a busy machine, and tests timed out under load).
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as net from "net";
import * as os from "os";
import * as path from "path";
import { buildStandins } from "../../lab/nodes/standinBundle";

const REPO = path.resolve(__dirname, "..", "..", "..");
const TSX = path.join(REPO, "node_modules", ".bin", "tsx");
const STANDIN = path.join(REPO, "test", "lab", "standin");

export const SOCKETS: Record<string, string> = {
  containerd: "/run/containerd/containerd.sock",
  crio: "/run/crio/crio.sock",
  "cri-dockerd": "/run/cri-dockerd.sock",
};

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export class LabNode {
  constructor(readonly lab: Lab, readonly name: string, readonly root: string) {}

  file(p: string): string {
    return path.join(this.root, p);
  }
  read(p: string): string | undefined {
    try {
      return fs.readFileSync(this.file(p), "utf8");
    } catch {
      return undefined;
    }
  }
  write(p: string, text: string): void {
    fs.mkdirSync(path.dirname(this.file(p)), { recursive: true });
    fs.writeFileSync(this.file(p), text);
  }
  exists(p: string): boolean {
    return fs.existsSync(this.file(p));
  }
  setVersion(v: string): void {
    this.write("/etc/lab-node/kubeadm-version", `${v}\n`);
  }
  async addRuntime(runtime: string): Promise<void> {
    const p = this.file(SOCKETS[runtime]);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(p, resolve));
    this.lab.servers.push(server);
  }
  run(tool: "kubeadm" | "kubectl" | "systemctl", args: string[], stdin = ""): Promise<Result> {
    return this.lab.exec(tool, args, { LAB_ROOT: this.root, LAB_NODE: this.name }, stdin);
  }
  kubeadm(...args: string[]): Promise<Result> {
    return this.run("kubeadm", args);
  }
  kubectl(...args: string[]): Promise<Result> {
    return this.run("kubectl", ["--kubeconfig", "/etc/kubernetes/admin.conf", ...args]);
  }
  systemctl(...args: string[]): Promise<Result> {
    return this.run("systemctl", args);
  }
  /** Writes a kubeadm config file into the node's root and returns its path as the stand-in sees it (host path). */
  config(name: string, yaml: string): string {
    const p = path.join(this.root, "tmp-config", name);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, yaml);
    return p;
  }
}

export class Lab {
  readonly dir: string;
  readonly servers: net.Server[] = [];
  private bundles: string | undefined;
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "standin-test-"));
    fs.mkdirSync(path.join(this.dir, "lab"), { recursive: true });
  }
  get labDir(): string {
    return path.join(this.dir, "lab");
  }
  setConfig(cfg: object): void {
    fs.writeFileSync(path.join(this.labDir, "config.json"), JSON.stringify(cfg));
  }
  async node(name: string, version: string, runtimes: string[] = ["containerd"]): Promise<LabNode> {
    const n = new LabNode(this, name, path.join(this.dir, "nodes", name));
    fs.mkdirSync(n.root, { recursive: true });
    n.setVersion(version);
    for (const r of runtimes) await n.addRuntime(r);
    return n;
  }
  /** Runs a stand-in command's bundle (built from the current sources at the Lab's first call) with node. */
  exec(tool: "kubeadm" | "kubectl" | "systemctl", args: string[], env: Record<string, string>, stdin = ""): Promise<Result> {
    this.bundles ??= buildStandins(this.labDir);
    return this.spawn(process.execPath, [path.join(this.bundles, `${tool}.js`), ...args], env, stdin);
  }
  /** `npm run lab -- kubectl ...` equivalent (host, no credentials). */
  hostKubectl(...args: string[]): Promise<Result> {
    const script = `require(${JSON.stringify(path.join(STANDIN, "cli.ts"))}).kubectl(process.argv.slice(1)).then(c => process.exit(c))`;
    return this.spawn(TSX, ["-e", script, "--", ...args], {}, "");
  }
  private spawn(program: string, args: string[], env: Record<string, string>, stdin: string): Promise<Result> {
    return new Promise((resolve, reject) => {
      const child = spawn(program, args, { env: { ...process.env, LAB_DIR: this.labDir, ...env }, cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
      // A call that exits without reading its stdin (most do) closes the pipe first on a busy machine: the
      // write then fails with EPIPE, which is no fault of the call (its exit code and output say how it went).
      child.stdin.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code !== "EPIPE") reject(e);
      });
      child.stdin.end(stdin);
    });
  }
  store(): StoreView {
    return JSON.parse(fs.readFileSync(path.join(this.labDir, "cluster", "store.json"), "utf8")) as StoreView;
  }
  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface StoreView {
  nodes: Record<string, { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { taints?: { key: string; effect: string }[]; unschedulable?: boolean }; status: { conditions: { type: string; status: string }[]; nodeInfo: { kubeletVersion: string } } }>;
  configMaps: Record<string, { metadata: { resourceVersion: string }; data: Record<string, string> }>;
  tokens: { id: string; secret: string; expires: number | null }[];
  certs?: { key: string; expires: number };
  ca?: { hash: string };
}

export function initConfig(opts: { version: string; name: string; criSocket?: string; gates?: Record<string, boolean>; cpe?: string; extraArgs?: { name: string; value: string }[]; kubelet?: string; taints?: string }): string {
  const gates = opts.gates ? `featureGates:\n${Object.entries(opts.gates).map(([k, v]) => `  ${k}: ${v}`).join("\n")}\n` : "";
  const args = opts.extraArgs ? `  kubeletExtraArgs:\n${opts.extraArgs.map((a) => `  - name: ${a.name}\n    value: "${a.value}"`).join("\n")}\n` : "";
  return (
    `apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration:\n  name: ${opts.name}\n` +
    (opts.criSocket ? `  criSocket: ${opts.criSocket}\n` : "") +
    args +
    (opts.taints ?? "") +
    `---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: ${opts.version}\n` +
    (opts.cpe ? `controlPlaneEndpoint: ${opts.cpe}\n` : "") +
    gates +
    (opts.kubelet ? `---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${opts.kubelet}` : "")
  );
}

export function joinConfig(opts: { name: string; endpoint: string; token: string; hash: string; criSocket?: string; certificateKey?: string }): string {
  return (
    `apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\nnodeRegistration:\n  name: ${opts.name}\n` +
    (opts.criSocket ? `  criSocket: ${opts.criSocket}\n` : "") +
    `discovery:\n  bootstrapToken:\n    apiServerEndpoint: ${opts.endpoint}\n    token: ${opts.token}\n    caCertHashes:\n    - ${opts.hash}\n` +
    (opts.certificateKey !== undefined ? `controlPlane:\n  certificateKey: "${opts.certificateKey}"\n` : "")
  );
}

/** Parses `kubeadm token create --print-join-command` output. */
export function parseJoin(line: string): { endpoint: string; token: string; hash: string } {
  const m = /^kubeadm join (\S+) --token (\S+) --discovery-token-ca-cert-hash (sha256:[0-9a-f]{64}) $/.exec(line.replace(/\n$/, ""));
  if (!m) throw new Error(`not a join command: ${JSON.stringify(line)}`);
  return { endpoint: m[1], token: m[2], hash: m[3] };
}
