/**
 * The node's /usr/local/sbin/{kubeadm,kubectl,systemctl,kubelet}: bash wrappers that run the stand-ins, either
 * bundled (plain JavaScript run by node, which starts like the binaries it stands for; see
 * standinBundle.ts) or as TypeScript through tsx (a few hundred milliseconds more per call, but an
 * edited stand-in takes effect at once).
 */
import * as path from "node:path";
import { REPO_ROOT } from "./paths";

export const STANDIN_COMMANDS = ["kubeadm", "kubectl", "systemctl", "kubelet"] as const;

/** The stand-in source of a command whose name is taken by a library module (`kubelet` -> kubeletcli.ts). */
const ENTRY_FILE: Record<string, string> = { kubelet: "kubeletcli" };

/** How a wrapper runs its stand-in: the bundle under `<lab>/standin/`, or tsx on the sources. */
export type StandinLauncher = "bundle" | "tsx";

/** Single-quotes a word for bash. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The TypeScript entry point of a stand-in command. */
export function standinScript(command: string, repoRoot = REPO_ROOT): string {
  return path.join(repoRoot, "test", "lab", "standin", `${ENTRY_FILE[command] ?? command}.ts`);
}

/** The tsx launcher in this checkout's node_modules. */
export function tsxBinary(repoRoot = REPO_ROOT): string {
  return path.join(repoRoot, "node_modules", ".bin", "tsx");
}

/** Where a lab keeps the bundled stand-ins (`<lab>/standin/<command>.js`). */
export function standinBundleDir(labDir: string): string {
  return path.join(labDir, "standin");
}

/** How {@link renderWrapper} runs the stand-in. */
export interface WrapperOptions {
  /** Default this checkout. */
  repoRoot?: string;
  /** Default `tsx` (needs no build); the lab's nodes use `bundle`. */
  launcher?: StandinLauncher;
  /** The node binary for `bundle`; default the one running this process. */
  nodeBinary?: string;
  /** The machine's hostname when it is not the node's name (LAB_HOSTNAME for the stand-ins). */
  hostname?: string;
}

/** The wrapper script for one stand-in command on one node. */
export function renderWrapper(command: string, labDir: string, node: string, o: WrapperOptions = {}): string {
  const run =
    (o.launcher ?? "tsx") === "bundle"
      ? `${shq(o.nodeBinary ?? process.execPath)} ${shq(path.join(standinBundleDir(labDir), `${command}.js`))}`
      : `${shq(tsxBinary(o.repoRoot))} ${shq(standinScript(command, o.repoRoot))}`;
  return [
    "#!/bin/bash",
    `# lab stand-in for ${command} on node ${node} (test/lab/nodes/wrappers.ts)`,
    `exec env LAB_DIR=${shq(labDir)} LAB_NODE=${shq(node)}${o.hostname !== undefined ? ` LAB_HOSTNAME=${shq(o.hostname)}` : ""} ${run} "$@"`,
    "",
  ].join("\n");
}
