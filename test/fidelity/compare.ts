/**
 * What the fidelity test compares: the files a run left (content and mode, byte for byte) and how
 * the command ended (success, or the error kubeadm printed), with a unified diff where they differ.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** One compared thing: a file (absent = undefined) or the outcome pseudo-artifact. */
export interface Artifact {
  /** the file's content, or undefined when the run left no such file */
  text: string | undefined;
  /** the file's permission bits (octal, e.g. "644"), undefined for the outcome or an absent file */
  mode?: string;
}

/** Artifact name -> artifact; file artifacts are named by their path, plus {@link OUTCOME}. */
export type Artifacts = Record<string, Artifact>;

/** The pseudo-artifact that holds how the command ended. */
export const OUTCOME = "outcome";

/** One artifact compared between real kubeadm and the stand-in. */
export interface ArtifactComparison {
  name: string;
  same: boolean;
  /** unified diff, real (---) against stand-in (+++); empty when same */
  diff: string;
}

/** klog's line header: `W1201 00:44:01.123456   12345 file.go:120] ` */
const KLOG = /^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^\]]+\] /;

/**
 * How a command ended, as compared: `ok` on exit 0, else `exit N:` and what it printed on stderr
 * without klog lines (their timestamps, pids and source lines are not behaviour).
 */
export function outcomeText(code: number, stderr: string): string {
  if (code === 0) return "ok\n";
  const lines = stderr.split("\n").filter((l) => l !== "" && !KLOG.test(l));
  return `exit ${code}:\n${lines.join("\n")}\n`;
}

/** klog warnings a run printed, header dropped (`deprecated scheme ...`), for the report only. */
export function klogWarnings(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => /^W\d{4} /.test(l) && KLOG.test(l))
    .map((l) => l.replace(KLOG, ""));
}

/** Reads the given files under a host root (the namespace's bind-mount sources). */
export function readArtifacts(root: string, files: readonly string[], code: number, stderr: string): Artifacts {
  const out: Artifacts = { [OUTCOME]: { text: outcomeText(code, stderr) } };
  for (const f of files) {
    const full = path.join(root, f);
    try {
      const st = fs.statSync(full);
      out[f] = { text: fs.readFileSync(full, "utf8"), mode: (st.mode & 0o7777).toString(8) };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      out[f] = { text: undefined };
    }
  }
  return out;
}

/** A file artifact as diffed: its bytes, with its mode on a first line (absent: a marker line). */
function render(a: Artifact | undefined, isFile: boolean): string {
  if (a === undefined || a.text === undefined) return "(no such file)\n";
  return isFile ? `(mode ${a.mode ?? "?"})\n${a.text}` : a.text;
}

/** `diff -u` of two texts, labelled real and stand-in (empty when equal). */
export function unifiedDiff(real: string, standin: string): string {
  if (real === standin) return "";
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-diff-"));
  try {
    fs.writeFileSync(path.join(dir, "a"), real);
    fs.writeFileSync(path.join(dir, "b"), standin);
    const r = spawnSync("diff", ["-u", "--label", "real kubeadm", "--label", "stand-in", "a", "b"], { cwd: dir, encoding: "utf8" });
    if (r.status !== 1) throw new Error(`diff failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Compares every artifact either side has, outcome first, then files in the order given. */
export function compareArtifacts(real: Artifacts, standin: Artifacts): ArtifactComparison[] {
  const names = [OUTCOME, ...Object.keys(real).filter((n) => n !== OUTCOME)];
  for (const n of Object.keys(standin)) if (!names.includes(n)) names.push(n);
  return names.map((name) => {
    const isFile = name !== OUTCOME;
    const a = render(real[name], isFile);
    const b = render(standin[name], isFile);
    return { name, same: a === b, diff: unifiedDiff(a, b) };
  });
}
