/**
 * Assembles a node script: header, the lib.sh functions it calls, its body. And wraps a script into
 * the command text a `command.remote.Command` runs.
 */
import { readFileSync } from "fs";
import { join } from "path";
import { shellQuote } from "./quote";

/** Where pulumi-kubeadm keeps its own state on a node (run markers, logs, backups). Mode 0700. */
export const PK_STATE_DIR = "/var/lib/pulumi-kubeadm";

/** lib.sh's functions by name, each the text from `name() {` to its closing `}` line. */
const LIB: ReadonlyMap<string, string> = (() => {
  const text = readFileSync(join(__dirname, "lib.sh"), "utf8");
  const found = new Map<string, string>();
  for (const m of text.matchAll(/^(pk_[a-z_]+)\(\) \{\n[\s\S]*?\n\}$/gm)) {
    found.set(m[1], m[0]);
  }
  return found;
})();

/** The lib.sh functions `text` calls, directly or through other lib functions, in lib.sh order. */
function libFunctionsFor(text: string): string[] {
  const wanted = new Set<string>();
  const visit = (t: string) => {
    for (const [name, body] of LIB) {
      if (!wanted.has(name) && new RegExp(`\\b${name}\\b`).test(t)) {
        wanted.add(name);
        visit(body);
      }
    }
  };
  visit(text);
  return [...LIB.keys()].filter((n) => wanted.has(n)).map((n) => LIB.get(n) as string);
}

/**
 * A complete bash script: `set -euo pipefail`, `PK_NODE` and `PK_STATE_DIR`, the lib.sh functions the
 * body calls, then the body lines.
 *
 * @param node the node's name (quoted with shellQuote; appears in every message the script prints).
 * @param body bash lines; every interpolated value in them must already be shellQuote'd.
 */
export function renderScript(node: string, body: string[]): string {
  const text = body.join("\n");
  return [
    "set -euo pipefail",
    `PK_NODE=${shellQuote(node)}`,
    `PK_STATE_DIR=${PK_STATE_DIR}`,
    "umask 0077",
    ...libFunctionsFor(text),
    text,
    "",
  ].join("\n");
}

/**
 * The command text for `command.remote.Command`: the script as one quoted argument to `bash -c`, run
 * through `sudo -n` when the SSH user is not root. Secrets never go in here: they go on stdin.
 */
export function remoteCommand(script: string): string {
  return `exec $([ "$(id -u)" -eq 0 ] || echo sudo -n) bash -c ${shellQuote(script)} pulumi-kubeadm`;
}
