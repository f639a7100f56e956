/**
 * The wire format between the TypeScript side and `pk_snapshot` / `pk_apply_files` in lib.sh: file
 * contents travel as base64 on single lines, so no file byte ever meets a shell parser.
 */
import { createHash } from "crypto";
import type { FileChange, FileState } from "../kubeadm/nodeFiles";

/** sha256 of a text's UTF-8 bytes, hex. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const SAFE_PATH = /^\/[A-Za-z0-9._/-]+$/;

function checkPath(path: string): string {
  if (!SAFE_PATH.test(path)) throw new Error(`unsafe file path ${JSON.stringify(path)}`);
  return path;
}

/**
 * Read the `pk-file` lines a node script printed (`pk_snapshot`), ignoring every other line.
 *
 * @returns a map from path to {@link FileState}.
 * @throws Error on a malformed `pk-file` line or a sha256 that does not match the content.
 */
export function parseFileSnapshot(stdout: string): Map<string, FileState> {
  const files = new Map<string, FileState>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("pk-file ")) continue;
    const [, path, sha, data = ""] = line.split(" ");
    if (path === undefined || sha === undefined) throw new Error(`malformed snapshot line: ${line.slice(0, 80)}`);
    if (sha === "absent") {
      files.set(path, { path });
      continue;
    }
    const content = Buffer.from(data, "base64").toString("utf8");
    if (sha256Hex(content) !== sha) throw new Error(`snapshot of ${path}: content does not match its sha256`);
    files.set(path, { path, sha256: sha, content });
  }
  return files;
}

/**
 * Encode changes as `pk_apply_files` reads them on stdin (one line each). Changes whose content
 * equals what was read are left out; an `overwrite` change carries `any` instead of the expected
 * sha256 (no compare-and-swap).
 * @throws Error on an unsafe path or a mode that is not octal `0NNN`.
 */
export function encodeFileChanges(changes: FileChange[]): string {
  return changes
    .filter((c) => c.content !== c.expected.content)
    .map((c) => {
      const expect = c.overwrite === true ? "any" : (c.expected.sha256 ?? "absent");
      if (c.content === undefined) return `pk-remove ${checkPath(c.path)} ${expect}\n`;
      const mode = c.mode ?? "0644";
      if (!/^0[0-7]{3}$/.test(mode)) throw new Error(`bad file mode ${mode}`);
      return `pk-write ${checkPath(c.path)} ${expect} ${mode} ${Buffer.from(c.content, "utf8").toString("base64")}\n`;
    })
    .join("");
}
