/**
 * Assembles a node script: header, the shell library (installed or loaded, library.ts), its body. And
 * wraps a script into the command text a `command.remote.Command` runs.
 */
import { shellQuote } from "./quote";
import { LIBRARY_PATH, PK_STATE_DIR, libraryInstallLines, libraryLoadLines } from "./library";

export { PK_STATE_DIR } from "./library";

/** Options of {@link renderScript}. */
export interface RenderOptions {
  /** The node's first step (`prepare`): install lib.sh when missing, instead of only loading it. */
  installLibrary?: boolean;
}

/**
 * A complete bash script: `set -euo pipefail`, `PK_NODE`, `PK_STATE_DIR` and `PK_LIB` (the library's
 * content-addressed path), the line that loads lib.sh (or installs it, for the node's first step),
 * then the body lines. The library itself is not in the text: its sha256 is (LIBRARY_SHA256), so a new
 * lib.sh changes every script.
 *
 * @param node the node's name (quoted with shellQuote; appears in every message the script prints).
 * @param body bash lines; every interpolated value in them must already be shellQuote'd.
 */
export function renderScript(node: string, body: string[], options: RenderOptions = {}): string {
  return [
    "set -euo pipefail",
    `PK_NODE=${shellQuote(node)}`,
    `PK_STATE_DIR=${PK_STATE_DIR}`,
    `PK_LIB=${LIBRARY_PATH}`,
    "umask 0077",
    ...(options.installLibrary ? libraryInstallLines() : libraryLoadLines()),
    body.join("\n"),
    "",
  ].join("\n");
}

/** The line that ends a step's values at the head of its stdin ({@link stdinWithValues}). */
export const VALUES_END = "---";

/**
 * A step's stdin: a title line, its values as `name: value` lines, the line `---`, then its data (may
 * be empty). The values are there for people: `pulumi preview --diff` shows a changed stdin line by
 * line, so a version or socket change reads as the changed value (the scripts themselves are hidden
 * from the diff). The command text made with `remoteCommand(script, true)` reads them off before the
 * script starts, so the script sees only the data.
 *
 * @param title e.g. `pulumi-kubeadm step upgrade on node w-1`; one line.
 * @param values names and values, one line each (no newline in them).
 * @throws Error when the title or a value holds a newline or is the `---` line itself.
 */
export function stdinWithValues(title: string, values: Array<[string, string]>, data: string): string {
  const lines = [title, ...values.map(([k, v]) => `${k}: ${v}`)];
  for (const l of lines) {
    if (l.includes("\n") || l === VALUES_END) throw new Error(`stdinWithValues: ${JSON.stringify(l)} is not one line of values`);
  }
  return `${lines.join("\n")}\n${VALUES_END}\n${data}`;
}

/**
 * The command text for `command.remote.Command`: the script as one quoted argument to `bash -c`, run
 * through `sudo -n` when the SSH user is not root. Secrets never go in here: they go on stdin. With
 * `valuesOnStdin`, the login shell first reads stdin up to the `---` line ({@link stdinWithValues}).
 * @param runsOn the node the command runs on (`cp-1`), given to the script as `$1`: a missing library
 *   names its prepare step as the one to replace (`libraryLoadLines`). The node's name, not the step's
 *   resource name, so that a renamed Cluster (aliases) changes no command text. Unset: no argument, and
 *   that message says "the node this step runs on".
 */
export function remoteCommand(script: string, valuesOnStdin = false, runsOn?: string): string {
  const skip = valuesOnStdin ? `while IFS= read -r pk_line && [ "$pk_line" != '${VALUES_END}' ]; do :; done; ` : "";
  const arg = runsOn !== undefined ? ` ${shellQuote(runsOn)}` : "";
  return `${skip}exec $([ "$(id -u)" -eq 0 ] || echo sudo -n) bash -c ${shellQuote(script)} pulumi-kubeadm${arg}`;
}
