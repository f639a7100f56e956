/** The node's /usr/local/sbin/{kubeadm,kubectl,systemctl}: bash wrappers that run the TypeScript stand-ins. */
import * as path from "node:path";
import { REPO_ROOT } from "./paths";

export const STANDIN_COMMANDS = ["kubeadm", "kubectl", "systemctl"] as const;

/** Single-quotes a word for bash. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function standinScript(command: string, repoRoot = REPO_ROOT): string {
  return path.join(repoRoot, "test", "lab", "standin", `${command}.ts`);
}

export function tsxBinary(repoRoot = REPO_ROOT): string {
  return path.join(repoRoot, "node_modules", ".bin", "tsx");
}

export function renderWrapper(command: string, labDir: string, node: string, repoRoot = REPO_ROOT): string {
  return [
    "#!/bin/bash",
    `# lab stand-in for ${command} on node ${node} (test/lab/nodes/wrappers.ts)`,
    `exec env LAB_DIR=${shq(labDir)} LAB_NODE=${shq(node)} ${shq(tsxBinary(repoRoot))} ${shq(standinScript(command, repoRoot))} "$@"`,
    "",
  ].join("\n");
}
