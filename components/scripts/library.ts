/**
 * lib.sh on the node: installed ONCE per node, content-addressed, by the node's first step (`prepare`),
 * and sourced by every later step, so each command carries only its values and the call of the
 * library's function for its step (about 0.5 to 1.5 KB) instead of the shared functions and step bodies
 * (about 29 KB without lib.sh's comments), and the Pulumi state grows by one copy of the library per node
 * (gzip + base64, about 11 KB, on the prepare step's stdin, which `pulumi preview --diff` does not
 * print), not one per step. It rides on stdin rather than in the command text because pulumi-command
 * quotes the command text in the error of a failed command: a failed prepare (a missing kubeadm, a
 * wrong socket) would otherwise bury its one-line reason under the packed library.
 *
 * The file is `/var/lib/pulumi-kubeadm/lib/<sha256>.sh` (0600, directory 0700): lib.sh without its
 * comments ({@link LIBRARY_TEXT}), named by the sha256 of that text, written
 * atomically (temp file in the same directory, checked against the hash, fsync, rename). Files of
 * earlier versions are left in place: a delete recorded in the state by an older version of this
 * package still finds the library its own script names.
 */
import { createHash } from "crypto";
import { readFileSync } from "fs";
import { join } from "path";
import { gzipSync } from "zlib";
import { shellQuote } from "./quote";
import { ADMIN_KUBECONFIG, CORDONED_ANNOTATION, CRI_SOCKET_ANNOTATION, MANAGED_LABELS_ANNOTATION, annotationJsonpath } from "./kubectl";
import { KUBELET_FILES } from "../kubeadm/nodeFiles";

/** Where pulumi-kubeadm keeps its own state on a node (run markers, logs, backups, the library). Mode 0700. */
export const PK_STATE_DIR = "/var/lib/pulumi-kubeadm";

/** lib.sh as this package ships it, with its comments: the shell functions every node script may call. */
export const LIBRARY_SOURCE: string = readFileSync(join(__dirname, "lib.sh"), "utf8");

/** The first line of the library on a node, where lib.sh's own comments are left out. */
export const LIBRARY_FIRST_LINE = "# pulumi-kubeadm's shell library: lib.sh of this package without its comments and blank lines";

/**
 * The lines of `source` without its comment lines (first non-blank character `#`) and blank lines.
 * Bash reads the same functions and statements (a unit test compares what `declare -f` prints for
 * both); lib.sh has no here-document, the one place where such a line would be text rather than a
 * comment.
 */
export function withoutComments(source: string): string[] {
  return source.split("\n").filter((line) => !/^\s*(#|$)/.test(line));
}

/**
 * The values lib.sh's functions take from this package's TypeScript, set when the library is loaded
 * (one source for both): kubeadm's admin kubeconfig (`pk_kubectl`'s), the annotations this component
 * reads and writes on Nodes (and the jsonpath of its cordon mark, `PK_CORDON_MARK`), the jsonpath of the
 * node-metadata step's one read (`.spec.unschedulable`, then the managed-labels, cri-socket and
 * cordon-mark annotations, `|` between them), and the kubelet files the upgrade step reports
 * (`PK_KUBELET_FILES`, an array).
 */
export const LIBRARY_VALUES: string[] = [
  `PK_ADMIN_KUBECONFIG=${shellQuote(ADMIN_KUBECONFIG)}`,
  `PK_KUBELET_FILES=(${Object.values(KUBELET_FILES).map(shellQuote).join(" ")})`,
  `PK_CRI_SOCKET_ANNOTATION=${shellQuote(CRI_SOCKET_ANNOTATION)}`,
  `PK_LABELS_ANNOTATION=${shellQuote(MANAGED_LABELS_ANNOTATION)}`,
  `PK_CORDONED_ANNOTATION=${shellQuote(CORDONED_ANNOTATION)}`,
  `PK_CORDON_MARK=${shellQuote(annotationJsonpath(CORDONED_ANNOTATION))}`,
  `PK_NODE_METADATA_READ=${shellQuote(
    `{.spec.unschedulable}|${annotationJsonpath(MANAGED_LABELS_ANNOTATION)}|${annotationJsonpath(CRI_SOCKET_ANNOTATION)}|${annotationJsonpath(CORDONED_ANNOTATION)}`,
  )}`,
];

/**
 * The library as installed on a node: {@link LIBRARY_FIRST_LINE}, the {@link LIBRARY_VALUES}, then
 * lib.sh without its comments ({@link withoutComments}). Every
 * node's copy rides in the state twice (its prepare step's stdin, as input and as output), and the
 * engine writes the whole state after every resource operation; without its comments it packs to about
 * 11 KB, where lib.sh as written would take about 18 KB.
 */
export const LIBRARY_TEXT: string = libraryText(LIBRARY_SOURCE);

/** The library as installed made from a lib.sh text `source`: {@link LIBRARY_TEXT}'s recipe. */
export function libraryText(source: string): string {
  return [LIBRARY_FIRST_LINE, ...LIBRARY_VALUES, ...withoutComments(source), ""].join("\n");
}

/**
 * The sha256 (hex) of the library as installed (LIBRARY_TEXT). It names the library's file on the node and is part of every step's
 * command text, so a change of lib.sh (a new version of this package) changes every step's inputs:
 * each step is updated (runs again, idempotent) with the new library, which its node's prepare step,
 * ordered before it, has installed first.
 */
export const LIBRARY_SHA256: string = createHash("sha256").update(LIBRARY_TEXT).digest("hex");

/** The library's path on a node: `/var/lib/pulumi-kubeadm/lib/<LIBRARY_SHA256>.sh`. */
export const LIBRARY_PATH = `${PK_STATE_DIR}/lib/${LIBRARY_SHA256}.sh`;

/**
 * The library as installed (LIBRARY_TEXT) gzip'd (level 9, no file name or time in the header, so the same text gives the same bytes) and
 * base64'd, one line: the data of the prepare step's stdin, which `libraryInstallLines` reads.
 */
export const LIBRARY_PACKED: string = gzipSync(Buffer.from(LIBRARY_TEXT, "utf8"), { level: 9 }).toString("base64");

/** Bash lines that print `pulumi-kubeadm: node <PK_NODE>: <message>` on stderr and exit 1, before lib.sh (and its pk_fail) is loaded. */
function failLine(message: string): string {
  return `{ printf 'pulumi-kubeadm: node %s: %s\\n' "$PK_NODE" ${message} >&2; exit 1; }`;
}

/**
 * Bash lines that install the library at `$PK_LIB` when it is missing or differs (a damaged file),
 * from LIBRARY_PACKED on the script's stdin, then source it. For the node's first step (`prepare`).
 * Needs `gzip` and `base64` (coreutils) on the node. Fails naming the node when stdin does not unpack
 * to a text whose sha256 is LIBRARY_SHA256.
 */
export function libraryInstallLines(): string[] {
  const sha = shellQuote(LIBRARY_SHA256);
  const sum = `"$(sha256sum <"$pk_tmp" | cut -d' ' -f1)"`;
  return [
    `if [ ! -f "$PK_LIB" ] || [ "$(sha256sum <"$PK_LIB" | cut -d' ' -f1)" != ${sha} ]; then`,
    `  mkdir -p "\${PK_LIB%/*}" && chmod 0700 "$PK_STATE_DIR" "\${PK_LIB%/*}"`,
    `  pk_tmp=$(mktemp "\${PK_LIB%/*}/.install.XXXXXX")`,
    `  base64 -d | gzip -dc >"$pk_tmp" || { rm -f "$pk_tmp"; ${failLine(`"could not unpack the shell library from stdin (are gzip and base64 installed?)"`)} }`,
    `  [ ${sum} = ${sha} ] || { rm -f "$pk_tmp"; ${failLine(`"the unpacked shell library does not match its sha256"`)} }`,
    `  chmod 0600 "$pk_tmp" && sync "$pk_tmp" && mv -f "$pk_tmp" "$PK_LIB" && sync "\${PK_LIB%/*}"`,
    `fi`,
    `. "$PK_LIB"`,
  ];
}

/**
 * Bash lines that source the library at `$PK_LIB`, for every step but `prepare`. When it is missing
 * (the machine was reinstalled, or /var/lib/pulumi-kubeadm removed, after the node's prepare step ran)
 * the step fails, changing nothing, naming the node, the file and what to do: run the prepare step of
 * the node the step runs on again, which installs it (the first control-plane node, for the steps that
 * run there for another node: `PK_NODE`, which the message names, is the node the step is about). The
 * node it runs on is the script's `$1` (`remoteCommand`'s `runsOn`: every command text the component
 * makes gives it), which the message names as the machine and in the resource to replace
 * (`<cluster>-cp-1-prepare`, the Cluster's name left as `<cluster>` so that a renamed Cluster changes no
 * text); a script run without it names the machine by `uname -n` and the node as "the node this step
 * runs on". That run of `pulumi up` reinstalls the library and runs the steps waiting for it. (Installing it here instead would put the library back into every
 * command, which is what this module avoids; the message is short for the same reason: every step's
 * create, update and delete carry it, in the state twice.)
 */
export function libraryLoadLines(): string[] {
  return [
    `[ -f "$PK_LIB" ] || ${failLine(`"$PK_LIB missing on \${1:-$(uname -n)}, nothing changed: pulumi up --replace '<URN of <cluster>-\${1:-<the node this step runs on>}-prepare>' installs it again and finishes the work"`)}`,
    `. "$PK_LIB"`,
  ];
}
