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

/**
 * The command text for `command.remote.Command`: the script as one quoted argument to `bash -c`, run
 * through `sudo -n` when the SSH user is not root. Secrets never go in here: they go on stdin.
 */
export function remoteCommand(script: string): string {
  return `exec $([ "$(id -u)" -eq 0 ] || echo sudo -n) bash -c ${shellQuote(script)} pulumi-kubeadm`;
}
