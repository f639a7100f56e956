/**
 * End-to-end helpers: a lab of real sshd nodes with the kubeadm stand-in, the real root program run by
 * the REAL Pulumi CLI and engine (test/lab/engine), and readers for what ended up on the nodes, in the
 * stand-in's cluster store and in the nodes' own sshd logs.
 */
import { mkdirSync, mkdtempSync, readFileSync, existsSync, renameSync, rmSync, symlinkSync, writeFileSync } from "fs";
import { createHash } from "crypto";
import { tmpdir } from "os";
import { join } from "path";
import { stringify } from "yaml";
import { startLab, stopLab, hostPathOf, readStackFile, readLab, countSince, logOffsets, REPO_ROOT } from "../nodes";
import { execFileSync, spawn } from "child_process";
import { pathToFileURL } from "url";
import { LabRunResult, Mode, RunOptions } from "../engine/run";
import { pulumiPaths } from "../engine/paths";
import { labCliBuild } from "./labBuild";

/**
 * Which of Jest's workers runs this test file (`JEST_WORKER_ID`, from 1; 1 when Jest runs in band).
 * `npm test` runs two workers, so two e2e files may run at once, each on a lab of its own.
 */
const WORKER = Number(process.env["JEST_WORKER_ID"] ?? "1");
if (!Number.isInteger(WORKER) || WORKER < 1 || WORKER > 100) throw new Error(`JEST_WORKER_ID ${process.env["JEST_WORKER_ID"]}: expected a whole number from 1 to 100`);

/**
 * The e2e tests' own lab folder, apart from a developer's `.lab`: `.lab-e2e` for Jest's first worker,
 * `.lab-e2e-<n>` for its n-th.
 */
export const LAB_DIR = join(REPO_ROOT, WORKER === 1 ? ".lab-e2e" : `.lab-e2e-${WORKER}`);

/**
 * The address of the e2e lab's `i`-th machine (from 0): `127.0.<worker - 1>.<110 + i>`, so the labs of
 * two Jest workers never share an address, nor meet the bench's (127.0.0.150-199) or a developer's lab
 * (127.0.0.2+) beyond the first worker's 110 to 149.
 * @throws Error past 40 machines.
 */
export function nodeAddress(i: number): string {
  if (!Number.isInteger(i) || i < 0 || i > 39) throw new Error(`e2e lab: machine ${i} is outside 0 to 39`);
  return `127.0.${WORKER - 1}.${110 + i}`;
}

/**
 * Jest's limit for one e2e test, in ms: a guard against a hang, not a speed check. A scenario takes 1 to
 * 3 minutes on an idle 2-core machine and several times that beside other work (a 300 s limit was
 * reached under a load average of 12), so the limit is far above either.
 */
export const E2E_TEST_LIMIT_MS = 1_200_000;

/** A node of a test stack, plus the runtime sockets the lab gives it. */
export interface TestNode {
  name: string;
  role: "control-plane" | "worker";
  criSocket?: string;
  runtimes: string[];
  labels?: Record<string, string>;
  kubeletExtraArgs?: Array<{ name: string; value: string }>;
  /** The machine is gone (`gone: true` in the stack). */
  gone?: boolean;
  /** The machine's hostname, when it is not the Node name (lab:nodes.<name>.hostname). */
  hostname?: string;
  /** Which lab machine ({@link nodeAddress}(slot)); default its index in the list, so a node taken out of the middle moves the later ones to other machines. */
  slot?: number;
}

export const CONTAINERD = "unix:///run/containerd/containerd.sock";
export const CRIO = "unix:///var/run/crio/crio.sock";
/** Where kubeadm's probe finds containerd (the path it reports when it detects it). */
export const CONTAINERD_PROBED = "unix:///var/run/containerd/containerd.sock";

/** Three control-plane nodes, two workers; worker-2 on CRI-O; cp-3 with criSocket unset (detected). */
export const MIXED: TestNode[] = [
  { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "cp-2", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
  { name: "cp-3", role: "control-plane", runtimes: ["containerd"] },
  { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"], labels: { "node.example.com/pool": "general" } },
  { name: "worker-2", role: "worker", criSocket: CRIO, runtimes: ["crio"], labels: { "node.example.com/pool": "crio" } },
];

/** Write a stack file for these nodes and settings; returns its path. */
export function writeStack(name: string, version: string, nodes: TestNode[], extra: Record<string, unknown> = {}): string {
  const dir = join(LAB_DIR, "stacks");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `Pulumi.${name}.yaml`);
  const config: Record<string, unknown> = {
    "kubeadm:kubernetesVersion": version,
    "kubeadm:controlPlaneEndpoint": `${nodeAddress(0)}:6443`,
    "kubeadm:clusterName": "e2e",
    "kubeadm:kubernetesProvider": false,
    "kubeadm:kubeletSettleSeconds": 0,
    "kubeadm:nodes": nodes.map((n, i) => ({
      name: n.name,
      role: n.role,
      host: nodeAddress(n.slot ?? i),
      ...(n.criSocket ? { criSocket: n.criSocket } : {}),
      ...(n.labels ? { labels: n.labels } : {}),
      ...(n.kubeletExtraArgs ? { kubeletExtraArgs: n.kubeletExtraArgs } : {}),
      ...(n.gone ? { gone: true } : {}),
    })),
    "lab:nodes": Object.fromEntries(nodes.map((n) => [n.name, { runtimes: n.runtimes, ...(n.hostname ? { hostname: n.hostname } : {}) }])),
    ...extra,
  };
  writeFileSync(file, stringify({ config }));
  return file;
}

/** Start (replacing any) e2e lab for a stack file, with stand-in durations and the lab's clock at real time; new machines, so no stack state. */
export async function labUp(stackFile: string, durations: Record<string, number> = {}): Promise<void> {
  await startLab({ spec: readStackFile(stackFile), labDir: LAB_DIR, ifRunning: "replace" });
  const p = pulumiPaths(LAB_DIR);
  for (const d of [p.state, p.project]) rmSync(d, { recursive: true, force: true });
  const configPath = join(LAB_DIR, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  config.durations = { ...config.durations, ...durations };
  config.clockOffsetSeconds = 0;
  writeFileSync(configPath, JSON.stringify(config, null, 2));
}

/**
 * Moves the lab's clock to `seconds` past the real time, for the stand-ins and for the Pulumi program of
 * every later {@link run} (e2e/clock.cjs): what a test does instead of sleeping past a lifetime.
 */
export function setLabClock(seconds: number): void {
  const configPath = join(LAB_DIR, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  writeFileSync(configPath, JSON.stringify({ ...config, clockOffsetSeconds: seconds }, null, 2));
}

export async function labDown(): Promise<void> {
  await stopLab({ labDir: LAB_DIR });
}

/** One Command resource of a run, as the engine reported it. */
export interface E2eResource {
  name: string;
  /** The engine's operation: create, update, delete, replace, create-replacement, delete-replaced... */
  op: string;
  /** False when the engine reported the operation failed. */
  ok: boolean;
  /** The engine's error diagnostics for this resource. */
  error?: string;
  /** The operation when the engine ran it (not in a preview), else empty. */
  ran: string[];
}

/** A run of the real engine on the e2e lab, in the shape the e2e tests read. */
export interface E2eRun {
  ok: boolean;
  /** Errors not tied to one Command resource (the program threw, the CLI refused), when the run failed. */
  errors: string[];
  /** The Command resources the engine planned or ran an operation on (unchanged ones are not listed). */
  resources: E2eResource[];
  outputs: Record<string, unknown>;
  /** SSH connections each node's sshd accepted during the run, by `address:port` (zero counts left out). */
  sshSessions: Record<string, number>;
  /** The same counts by node name (zero counts left out). */
  nodeSessions: Record<string, number>;
  engine: LabRunResult;
  log: string[];
}

const COMMAND = "command:remote:Command";

/** The checkout whose lab CLI (and so whose component code) later runs use: this one unless set. */
let codeRoot = REPO_ROOT;

/**
 * A commit of this repository as files, with this checkout's node_modules: extracted once per checkout
 * (under the temp folder, named by the commit and this checkout's path; extracted beside it and renamed
 * into place, so an interrupted extraction leaves nothing half made), and linked to this checkout's
 * node_modules on every call (a checkout since removed leaves no dangling link behind).
 */
export function treeAt(commit: string): string {
  const dir = join(tmpdir(), `pulumi-kubeadm-${commit}-${createHash("sha256").update(REPO_ROOT).digest("hex").slice(0, 12)}`);
  if (!existsSync(dir)) {
    const partial = mkdtempSync(`${dir}.partial-`);
    execFileSync("tar", ["-x", "-C", partial], { input: execFileSync("git", ["-C", REPO_ROOT, "archive", commit], { maxBuffer: 1 << 30 }) });
    renameSync(partial, dir);
  }
  const modules = join(dir, "node_modules");
  rmSync(modules, { force: true });
  symlinkSync(join(REPO_ROOT, "node_modules"), modules);
  return dir;
}

/**
 * Runs later {@link run}s with the lab CLI and component code of another checkout of this repository
 * (a worktree at an older commit, to make a stack the way an earlier version did), on this lab and its
 * stack state; undefined: this checkout again.
 */
export function runCodeFrom(root: string | undefined): void {
  codeRoot = root ?? REPO_ROOT;
}

/**
 * `npm run lab -- <mode> <stack file> --json F` in its own process (as a user runs `pulumi up`: one
 * Pulumi program process per operation); resolves with the engine's record of the run.
 * @throws Error when the lab command wrote no record (it could not start the operation at all).
 */
async function labCommand(stackFile: string, mode: Mode, opts: RunOptions): Promise<LabRunResult> {
  const dir = join(LAB_DIR, "runs");
  mkdirSync(dir, { recursive: true });
  const record = join(dir, `${Date.now()}-${Math.random().toString(16).slice(2)}.json`);
  const args = [
    // The lab's clock (config.json clockOffsetSeconds) in the program's process too.
    "--require",
    join(__dirname, "clock.cjs"),
    // This checkout's lab CLI transpiled ahead of time (labBuild.ts); another checkout's through tsx.
    ...(codeRoot === REPO_ROOT
      ? ["--enable-source-maps", labCliBuild(REPO_ROOT, `w${WORKER}`)]
      : ["--import", pathToFileURL(join(codeRoot, "node_modules", "tsx", "dist", "loader.mjs")).href, join(codeRoot, "test", "lab", "cli.ts")]),
    mode === "up" ? "apply" : mode,
    stackFile,
    "--json",
    record,
    "--quiet",
    ...(opts.parallel !== undefined ? ["--parallel", String(opts.parallel)] : []),
    ...(opts.replace ?? []).flatMap((u) => ["--replace", u]),
    ...(opts.expectNoChanges ? ["--expect-no-changes"] : []),
  ];
  const stderr = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, LAB_DIR }, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.on("close", () => resolve(err));
  });
  if (!existsSync(record)) throw new Error(`lab ${mode} ${stackFile} wrote no record:\n${stderr}`);
  const result = JSON.parse(readFileSync(record, "utf8")) as LabRunResult;
  rmSync(record, { force: true });
  return result;
}

/** `pulumi up` (or preview, destroy, refresh) of the real root program with this stack file, on the real engine. */
export async function run(stackFile: string, mode: "apply" | Mode = "apply", log: string[] = [], opts: RunOptions = {}): Promise<E2eRun> {
  const nodes = readLab({ labDir: LAB_DIR });
  const offsets = logOffsets(LAB_DIR, nodes.map((n) => n.name));
  const engine = await labCommand(stackFile, mode === "apply" ? "up" : mode, opts);
  log.push(...engine.output.split("\n"));
  const counts = countSince(LAB_DIR, offsets);
  const sshSessions: Record<string, number> = {};
  const nodeSessions: Record<string, number> = {};
  for (const n of nodes) {
    const accepted = counts[n.name]?.accepted ?? 0;
    if (accepted > 0) {
      sshSessions[`${n.address}:${n.port ?? 22}`] = accepted;
      nodeSessions[n.name] = accepted;
    }
  }
  const errorsOf = (name: string) => engine.diagnostics.filter((d) => d.startsWith(`error ${name}: `)).map((d) => d.slice(`error ${name}: `.length));
  const resources = engine.steps
    .filter((st) => st.type === COMMAND)
    .map((st): E2eResource => {
      const errors = errorsOf(st.name);
      return {
        name: st.name,
        op: st.op,
        ok: st.done !== false,
        ...(errors.length > 0 ? { error: errors.join("\n") } : {}),
        ran: mode !== "preview" && st.done !== undefined ? [st.op] : [],
      };
    });
  const commandNames = new Set(resources.map((r) => r.name));
  const errors = engine.ok
    ? []
    : (() => {
        const other = engine.diagnostics.filter((d) => d.startsWith("error ") && !commandNames.has(d.slice(6, d.indexOf(": "))));
        return other.length > 0 || resources.some((r) => !r.ok) ? other : [engine.error ?? "failed"];
      })();
  return { ok: engine.ok, errors, resources, outputs: engine.outputs, sshSessions, nodeSessions, engine, log };
}

/** A file on a node, or undefined when absent. */
export function nodeFile(node: string, path: string): string | undefined {
  const p = hostPathOf(LAB_DIR, node, path);
  return existsSync(p) ? readFileSync(p, "utf8") : undefined;
}

/** The stand-in API server's Node objects, by name. */
export function storeNodes(): Record<string, { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { unschedulable?: boolean } }> {
  return JSON.parse(readFileSync(join(LAB_DIR, "cluster", "store.json"), "utf8")).nodes;
}

/** The Nodes that are unschedulable, and those that carry this component's cordon mark (`kubeadm.pulumi.com/cordoned`), by name. */
export function cordonedNodes(): { unschedulable: string[]; marked: string[] } {
  const nodes = Object.entries(storeNodes());
  return {
    unschedulable: nodes.filter(([, n]) => n.spec.unschedulable === true).map(([name]) => name),
    marked: nodes.filter(([, n]) => n.metadata.annotations["kubeadm.pulumi.com/cordoned"] !== undefined).map(([name]) => name),
  };
}

/**
 * Expects the run to have succeeded: `ok`, no error, no failed resource (each named with its error). A
 * failed run also shows the end of the CLI's own error text, which says what failed when no resource
 * did (an engine or plugin error: the diagnostics then say only "update failed").
 */
export function ok(result: E2eRun): void {
  expect({
    ok: result.ok,
    errors: result.errors,
    failed: result.resources.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`),
    cli: result.ok ? undefined : (result.engine.error ?? "").slice(-3000),
  }).toEqual({ ok: true, errors: [], failed: [] });
}

/** Everything a run said: the CLI's output and the engine's diagnostics, one text. */
export function said(r: E2eRun): string {
  return [...r.log, ...r.engine.diagnostics].join("\n");
}

/** Resources of a run whose commands ran, by operation. */
export function ran(result: E2eRun): string[] {
  return result.resources.filter((r) => r.ran.length > 0).map((r) => `${r.name}:${r.ran.join(",")}`);
}

/** The stand-in's log of successful kubeadm init/join/upgrade/reset runs: `<node> <command>` lines. */
export function kubeadmEvents(): string[] {
  const p = join(LAB_DIR, "cluster", "events.log");
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ").slice(1).join(" "));
}

/** Every file under a node's kubelet and kubernetes folders, path -> content, to compare before and after. */
export function nodeTree(node: string): Record<string, string> {
  const { readdirSync, statSync } = require("fs") as typeof import("fs");
  const out: Record<string, string> = {};
  const walk = (nodePath: string) => {
    const p = hostPathOf(LAB_DIR, node, nodePath);
    if (!existsSync(p)) return;
    if (statSync(p).isDirectory()) for (const f of readdirSync(p)) walk(`${nodePath}/${f}`);
    else out[nodePath] = readFileSync(p, "utf8");
  };
  for (const root of ["/etc/kubernetes", "/var/lib/kubelet", "/var/lib/pulumi-kubeadm"]) walk(root);
  return out;
}

/** Where each MIXED node's CRI endpoint ends up (cp-3's is detected at kubeadm's probe path). */
export const MIXED_ENDPOINTS: Record<string, string> = {
  "cp-1": CONTAINERD,
  "cp-2": CONTAINERD,
  "cp-3": CONTAINERD_PROBED,
  "worker-1": CONTAINERD,
  "worker-2": CRIO,
};

/** What the upstream kubeadm e2e test checks per node: instance-config content, the flag, the annotation. */
export interface NodeCriState {
  instanceConfig: string | undefined;
  flag: string | undefined;
  annotation: string | undefined;
}

/** The CRI-socket state of every node, read from its files and the stand-in store. */
export function criStates(names: string[]): Record<string, NodeCriState> {
  const nodes = storeNodes();
  return Object.fromEntries(
    names.map((n) => [
      n,
      {
        instanceConfig: nodeFile(n, "/var/lib/kubelet/instance-config.yaml"),
        flag: /--container-runtime-endpoint=(\S+?)"?(\s|$)/.exec(nodeFile(n, "/var/lib/kubelet/kubeadm-flags.env") ?? "")?.[1],
        annotation: nodes[n]?.metadata.annotations["kubeadm.alpha.kubernetes.io/cri-socket"],
      },
    ]),
  );
}

/** What kubeadm-facts.md says each node holds, node-local or legacy. */
export function expectedCriStates(endpoints: Record<string, string>, nodeLocal: boolean): Record<string, NodeCriState> {
  return Object.fromEntries(
    Object.entries(endpoints).map(([n, ep]) => [
      n,
      nodeLocal
        ? { instanceConfig: `containerRuntimeEndpoint: "${ep}"\n`, flag: undefined, annotation: undefined }
        : { instanceConfig: undefined, flag: ep, annotation: ep },
    ]),
  );
}

/** The ClusterConfiguration text in the stand-in's kubeadm-config ConfigMap. */
export function clusterConfiguration(): string {
  const store = JSON.parse(readFileSync(join(LAB_DIR, "cluster", "store.json"), "utf8"));
  return store.configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration as string;
}

/** The lab's one-step install (the deprecated `installCommand`): kubeadm and kubelet switch together. */
export const LAB_INSTALL = "echo v{version} >/etc/lab-node/kubeadm-version";

/**
 * The lab's two install steps, as the component runs them (kubeadm before `kubeadm upgrade`, the kubelet
 * and kubectl after the drain): the kubeadm package (the kubelet keeps its version in
 * /etc/lab-node/kubelet-version), then the kubelet package.
 */
export const LAB_INSTALLS: Record<string, string> = {
  "kubeadm:kubeadmInstallCommand":
    "[ -f /etc/lab-node/kubelet-version ] || cp /etc/lab-node/kubeadm-version /etc/lab-node/kubelet-version; echo v{version} >/etc/lab-node/kubeadm-version",
  "kubeadm:kubeletInstallCommand": "echo v{version} >/etc/lab-node/kubelet-version",
};
