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

/** Folders made by the samples (their `mktemp -d`) and by this file, removed at the end. */
const made: string[] = [];

/** Runs `block` in bash at the repository's root with `npm` recorded; returns the `npm` calls. */
function runRecorded(block: string): string[][] {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-sh-"));
  made.push(logDir);
  const log = path.join(logDir, "npm.log");
  const script = `set -e\nnpm() { printf '%s\\0' "$@" >>"${log}"; printf '\\n' >>"${log}"; }\n${block}`;
  execFileSync("bash", ["-c", script], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.split("\0").filter((a) => a !== ""));
}

/** The stack file the block's `npm run lab -- preview` names, parsed, with the calls made. */
function previewed(marker: string): { calls: string[][]; file: StackFile; dir: string } {
  const block = labSamples().find((b) => b.includes(marker));
  if (block === undefined) throw new Error(`README has no lab sample with ${marker}`);
  const calls = runRecorded(block);
  const preview = calls.find((c) => c.slice(0, 4).join(" ") === "run lab -- preview");
  if (preview === undefined) throw new Error(`the sample with ${marker} ran no preview: ${JSON.stringify(calls)}`);
  const file = preview[4]!;
  made.push(path.dirname(file));
  return { calls, file: parse(fs.readFileSync(file, "utf8")) as StackFile, dir: path.dirname(file) };
}

const example = (): StackFile => parse(fs.readFileSync(EXAMPLE, "utf8")) as StackFile;

afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

test("README has the three lab samples that edit a stack file", () => {
  expect(labSamples().length).toBeGreaterThanOrEqual(3);
});

test("the upgrade sample: the same stack file at the next minor version, previewed then applied", () => {
  const { calls, file } = previewed("next=$(mktemp -d)");
  const want = example();
  expect(want.config["kubeadm:kubernetesVersion"]).toBe("v1.34.2");
  want.config["kubeadm:kubernetesVersion"] = "v1.35.0";
  expect(file).toEqual(want);
  expect(calls.map((c) => c[3])).toEqual(["preview", "apply"]);
});

test("the removal sample: worker-1's entry taken out of kubeadm:nodes, nothing else changed", () => {
  const { file } = previewed("less=$(mktemp -d)");
  const want = example();
  const nodes = want.config["kubeadm:nodes"];
  expect(nodes.map((n) => n.name)).toContain("worker-1");
  want.config["kubeadm:nodes"] = nodes.filter((n) => n.name !== "worker-1");
  expect(file).toEqual(want);
});

test("the runtime-switch sample: worker-1 given both runtimes, then its criSocket set to CRI-O; a fresh lab from that copy", () => {
  const { calls, file, dir } = previewed("switch=$(mktemp -d)");
  const want = example();
  const w1 = want.config["kubeadm:nodes"].find((n) => n.name === "worker-1") as LabNodeEntry;
  expect(w1.criSocket).toBe("unix:///run/containerd/containerd.sock");
  w1.criSocket = "unix:///var/run/crio/crio.sock";
  want.config["lab:nodes"]["worker-1"] = { runtimes: ["containerd", "crio"] };
  expect(file).toEqual(want);
  const stack = path.join(dir, "Pulumi.lab.yaml");
  expect(calls.map((c) => c.slice(3).join(" "))).toEqual([
    `up --fresh ${stack}`,
    `apply ${stack}`,
    `preview ${stack}`,
    `apply ${stack}`,
    "ssh worker-1 cat /var/lib/kubelet/instance-config.yaml",
  ]);
});
