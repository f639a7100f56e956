/** Run a rendered node script for real in bash, with a temporary state dir and optional PATH stubs. */
import { spawnSync } from "child_process";
import { createHash } from "crypto";
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, readFileSync, renameSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { LIBRARY_PATH, LIBRARY_SHA256, LIBRARY_TEXT } from "../../../components/scripts/library";
import { kubeletScripts } from "../../../components/steps/kubelet";

/**
 * A copy of lib.sh where a test's scripts load it from (the node's copy is installed by its prepare step):
 * `<tmpdir>/pk-lib-<sha256>.sh`, shared by every test file and Jest worker (and any other run on the
 * machine), so it is written only when missing or different, and then whole: a temporary file renamed
 * into place, never truncated under a bash that is sourcing it.
 */
export function testLibrary(): string {
  const p = join(tmpdir(), `pk-lib-${LIBRARY_SHA256}.sh`);
  let current: string | undefined;
  try {
    current = readFileSync(p, "utf8");
  } catch {
    current = undefined;
  }
  if (current !== LIBRARY_TEXT) {
    const tmp = `${p}.${process.pid}.tmp`;
    writeFileSync(tmp, LIBRARY_TEXT);
    renameSync(tmp, p);
  }
  return p;
}

export interface BashResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The sandboxes this test file made, removed after its tests ({@link removeSandboxes}). */
const made: string[] = [];

/** Remove every sandbox made so far (run after each test file's tests; a test may call it itself). */
export function removeSandboxes(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// Each test file loads this module at its top, where Jest takes hooks.
if (typeof afterAll === "function") afterAll(removeSandboxes);

/**
 * A temp dir with `bin/` for stubs and `state/` standing in for /var/lib/pulumi-kubeadm, removed after
 * the test file's tests.
 */
export function sandbox(): { dir: string; bin: string; state: string; stub: (name: string, body: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), "pk-script-"));
  made.push(dir);
  const bin = join(dir, "bin");
  const state = join(dir, "state");
  mkdirSync(bin);
  mkdirSync(state);
  return {
    dir,
    bin,
    state,
    stub: (name, body) => {
      const p = join(bin, name);
      writeFileSync(p, `#!/bin/bash\n${body}\n`);
      chmodSync(p, 0o755);
    },
  };
}

/**
 * An edited copy of the library (its paths pointed into a sandbox, say) in `dir`, for `withLibrary`; its
 * path, `<dir>/lib-<sha256 of the copy>.sh`, so copies edited differently in one dir stay apart.
 */
function libraryCopy(dir: string, edit: (text: string) => string): string {
  const text = edit(LIBRARY_TEXT);
  const p = join(dir, `lib-${createHash("sha256").update(text).digest("hex")}.sh`);
  writeFileSync(p, text);
  return p;
}

/**
 * `script` loading the library from `lib` instead of the node's path; without `lib`, from testLibrary()
 * when it names the node's path, else (a script already pointed at a copy) as it is.
 */
export function withLibrary(script: string, lib?: string): string {
  if (lib === undefined && !script.includes(`\nPK_LIB=${LIBRARY_PATH}\n`)) return script;
  return script.replace(/^PK_LIB=.*$/m, `PK_LIB=${lib ?? testLibrary()}`);
}

/** A rewrite of the node's paths (kubeadm's config dir, /etc/kubernetes, /var/lib/etcd, /var/lib/kubelet) into `dir`. */
export function nodePaths(dir: string): (text: string) => string {
  return (text) =>
    text
      .split("/etc/kubernetes/pulumi-kubeadm").join(join(dir, "etc"))
      .split("/etc/kubernetes").join(join(dir, "k8s"))
      .split("/var/lib/etcd").join(join(dir, "etcd"))
      .split("/var/lib/kubelet").join(join(dir, "kubelet"));
}

/**
 * `script` and the library it loads rewritten alike by `rewrite` (default: {@link nodePaths} into `dir`),
 * the library a copy in `dir`. The step bodies live in lib.sh: a rewrite of the script's text alone
 * would leave them working on the host's own paths.
 */
export function sandboxed(script: string, dir: string, rewrite: (text: string) => string = nodePaths(dir)): string {
  return withLibrary(rewrite(script), libraryCopy(dir, rewrite));
}

/**
 * Run `script` with bash; PK_STATE_DIR is pointed at `state`, `bin` is put first on PATH, and PK_LIB at
 * `lib` (default: a copy of lib.sh in the temp dir, as a node's prepare step would have installed it).
 * `args`: the script's positional parameters (`remoteCommand` gives the prepare step's name as `$1`).
 */
export function runBash(script: string, opts: { stdin?: string; bin?: string; state?: string; wrap?: string[]; lib?: string; args?: string[] } = {}): BashResult {
  // A script already pointed at a copy (withLibrary) keeps it unless `lib` is given.
  let text = opts.lib !== undefined || script.includes(`\nPK_LIB=${LIBRARY_PATH}\n`) ? withLibrary(script, opts.lib) : script;
  if (opts.state) text = text.replace(/^PK_STATE_DIR=.*$/m, `PK_STATE_DIR=${opts.state}`);
  const env = { ...process.env, PATH: `${opts.bin ? `${opts.bin}:` : ""}${process.env.PATH}` };
  const [cmd, ...args] = [...(opts.wrap ?? []), "bash", "-c", text, "test", ...(opts.args ?? [])];
  const r = spawnSync(cmd as string, args, { input: opts.stdin ?? "", env, encoding: "utf8", timeout: 30000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The kubelet step's script for node w1 at v1.34.2 with no settle time: on a sandbox with no version
 * record it installs nothing (the node counts as at the target) and only applies its stdin's file changes.
 */
export function kubeletScript(nodeLocalCriSocket: boolean, install?: string): string {
  return kubeletScripts({ node: "w1", version: "v1.34.2", settleSeconds: 0, nodeLocalCriSocket, install }).create;
}

/**
 * Bash for the top of a kubectl stub, before it shifts its arguments: `$tag`, the tag lib.sh's
 * pk_nodes_lines puts in its jsonpath (a random UUID; empty when the call has none), and `tagged FIELD...`,
 * which prints one line as kubectl prints that jsonpath for a Node: the tag, then the fields (its name
 * first) with the tag between them. A field may hold `|` or a newline, as an annotation value may.
 */
export const KUBECTL_STUB_TAG = [
  `tag=$(printf '%s' "$*" | grep -o '[0-9a-f]\\{8\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{4\\}-[0-9a-f]\\{12\\}' | head -n 1)`,
  `tagged() { local f line=$tag$1; shift; for f in "$@"; do line+=$tag$f; done; printf '%s\\n' "$line"; }`,
].join("\n");
