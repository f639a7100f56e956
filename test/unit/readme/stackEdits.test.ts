/**
 * README's lab samples that edit a copy of the lab's stack file (the upgrade, the removal of a worker,
 * the runtime switch) make the file their prose describes. Each sample runs as written in real bash
 * from the repository's root, with `npm` replaced by a function that records its arguments (no lab is
 * started); the stack file each `preview` names is then read and compared with
 * examples/lab/Pulumi.lab.yaml.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";

const REPO = path.resolve(__dirname, "..", "..", "..");
const EXAMPLE = path.join(REPO, "examples", "lab", "Pulumi.lab.yaml");

interface LabNodeEntry {
  name: string;
  criSocket?: string;
  [k: string]: unknown;
}
type StackFile = { config: Record<string, unknown> & { "kubeadm:nodes": LabNodeEntry[]; "lab:nodes": Record<string, { runtimes: string[] }> } };

/** README's `sh` blocks that preview a lab stack file. */
function labSamples(): string[] {
  const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.includes("npm run lab -- preview"));
}

/**
 * The folder every sample runs in: its `TMPDIR`, so its `mktemp -d` folders land inside it, and the
 * recorder's log. Removed whole at the end, whatever the samples did.
 */
let sandbox = "";
beforeAll(() => {
  sandbox = fs.mkdtempSync(path.join(os.tmpdir(), "readme-sh-"));
});
afterAll(() => {
  if (sandbox !== "") fs.rmSync(sandbox, { recursive: true, force: true });
});

/** One `npm` call of a sample: its arguments, and the stack file it names as it was then. */
interface NpmCall {
  args: string[];
  file?: StackFile;
}

/**
 * Runs `block` in bash (`set -eu`: a misspelt variable fails it) at the repository's root with `npm`
 * recorded: each call's arguments, and a copy of the stack file it names (an argument ending in
 * `Pulumi.lab.yaml`) as it was at that call.
 */
function runRecorded(block: string): NpmCall[] {
  const run = fs.mkdtempSync(path.join(sandbox, "run-"));
  const log = path.join(run, "npm.log");
  const recorder = `npm_calls=0; npm() { local a; npm_calls=$((npm_calls + 1)); for a in "$@"; do printf '%s\\0' "$a" >>"${log}"; case "$a" in *Pulumi.lab.yaml) cp "$a" "${run}/call-$npm_calls.yaml";; esac; done; printf '\\n' >>"${log}"; }`;
  execFileSync("bash", ["-c", `set -eu\n${recorder}\n${block}`], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TMPDIR: run } });
  const lines = fs.readFileSync(log, "utf8").split("\n").filter((l) => l !== "");
  return lines.map((l, i) => {
    const copy = path.join(run, `call-${i + 1}.yaml`);
    return { args: l.split("\0").filter((a) => a !== ""), ...(fs.existsSync(copy) ? { file: parse(fs.readFileSync(copy, "utf8")) as StackFile } : {}) };
  });
}

/** The README sample holding `marker`, run (see {@link runRecorded}). */
function sample(marker: string): NpmCall[] {
  const block = labSamples().find((b) => b.includes(marker));
  if (block === undefined) throw new Error(`README has no lab sample with ${marker}`);
  return runRecorded(block);
}

/** `npm run lab -- <verb> <file>` as the sample called it. */
const verb = (c: NpmCall): string => c.args.slice(0, 4).join(" ");

const example = (): StackFile => parse(fs.readFileSync(EXAMPLE, "utf8")) as StackFile;

/** The sample previewed then applied one stack file, `want`, as it was at both calls. */
function expectPreviewThenApply(calls: NpmCall[], want: StackFile): void {
  expect(calls.map(verb)).toEqual(["run lab -- preview", "run lab -- apply"]);
  for (const c of calls) expect(c.file).toEqual(want);
  expect(calls[0]!.args[4]).toBe(calls[1]!.args[4]);
}

test("README has the three lab samples that edit a stack file", () => {
  expect(labSamples().length).toBeGreaterThanOrEqual(3);
});

test("the upgrade sample: the same stack file at the next minor version, previewed then applied", () => {
  const calls = sample("next=$(mktemp -d)");
  const want = example();
  expect(want.config["kubeadm:kubernetesVersion"]).toBe("v1.34.2");
  want.config["kubeadm:kubernetesVersion"] = "v1.35.0";
  expectPreviewThenApply(calls, want);
});

test("the removal sample: worker-1's entry taken out of kubeadm:nodes, nothing else changed, previewed then applied", () => {
  const calls = sample("less=$(mktemp -d)");
  const want = example();
  const nodes = want.config["kubeadm:nodes"];
  expect(nodes.map((n) => n.name)).toContain("worker-1");
  want.config["kubeadm:nodes"] = nodes.filter((n) => n.name !== "worker-1");
  expectPreviewThenApply(calls, want);
});

test("the runtime-switch sample: a fresh lab and cluster with worker-1 on both runtimes and containerd, then worker-1 switched to CRI-O", () => {
  const calls = sample("switch=$(mktemp -d)");
  const before = example();
  before.config["lab:nodes"]["worker-1"] = { runtimes: ["containerd", "crio"] };
  const w1 = before.config["kubeadm:nodes"].find((n) => n.name === "worker-1") as LabNodeEntry;
  expect(w1.criSocket).toBe("unix:///run/containerd/containerd.sock");
  const after = structuredClone(before);
  (after.config["kubeadm:nodes"].find((n) => n.name === "worker-1") as LabNodeEntry).criSocket = "unix:///var/run/crio/crio.sock";
  expect(calls.map((c) => c.args.slice(3, 4).concat(c.file === undefined ? c.args.slice(4) : []).join(" "))).toEqual([
    "up",
    "apply",
    "preview",
    "apply",
    "ssh worker-1 cat /var/lib/kubelet/instance-config.yaml",
  ]);
  expect(calls[0]!.args.slice(3, 5)).toEqual(["up", "--fresh"]);
  // The lab and the first cluster from the file before the switch; the preview and the second apply after it.
  expect([calls[0]!.file, calls[1]!.file]).toEqual([before, before]);
  expect([calls[2]!.file, calls[3]!.file]).toEqual([after, after]);
  expect(new Set(calls.slice(0, 4).map((c) => c.args.at(-1))).size).toBe(1);
});
