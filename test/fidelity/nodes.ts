/**
 * The two throwaway nodes of one fidelity case: one with real kubeadm and a fake systemctl on PATH,
 * one with the lab's stand-in wrappers (kubeadm, kubectl, systemctl) exactly as a lab node has them.
 * Both get the case's config file and patches, the same hostname and the same listening sockets.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { STANDIN_COMMANDS, renderWrapper } from "../lab/nodes/wrappers";
import { CONFIG_FILE, FidelityCase, HOSTNAME, KUBELET_FILES, PATCHES_DIR, initArgs, patchFiles, phaseArgs, renderConfig, socketPaths } from "./cases";
import { Artifacts, readArtifacts } from "./compare";
import { NamespaceResult, hostPath, prepareRoot, runInNamespace } from "./namespace";

/** Where the fake systemctl logs its calls, inside the node. */
export const SYSTEMCTL_LOG = "/etc/lab-node/systemctl.log";

/**
 * systemctl for real kubeadm in a namespace without systemd: logs each call; `is-active` says
 * inactive (so kubeadm leaves resolvConf unset, as for a node without systemd-resolved), `status`
 * says the unit is loaded, everything else succeeds.
 */
export const FAKE_SYSTEMCTL = `#!/bin/bash
# fidelity test: fake systemctl for real kubeadm (test/fidelity/nodes.ts)
echo "$*" >> ${SYSTEMCTL_LOG}
case "\${1:-}" in
  is-active) echo inactive; exit 3 ;;
  status) echo "   Loaded: loaded (/lib/systemd/system/\${2:-unit}.service; enabled)"; echo "   Active: inactive (dead)"; exit 3 ;;
esac
exit 0
`;

/** One side's run of one case. */
export interface SideResult {
  /** the kubeadm arguments that wrote the files */
  args: string[];
  code: number;
  stdout: string;
  stderr: string;
  artifacts: Artifacts;
  /** calls the fake systemctl saw (real kubeadm only) */
  systemctlCalls?: string[];
}

function writeInputs(root: string, c: FidelityCase): void {
  const cfg = hostPath(root, CONFIG_FILE);
  fs.mkdirSync(path.dirname(cfg), { recursive: true });
  fs.writeFileSync(cfg, renderConfig(c));
  const patches = patchFiles(c);
  if (Object.keys(patches).length > 0) {
    const dir = hostPath(root, PATCHES_DIR);
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(patches)) fs.writeFileSync(path.join(dir, name), text);
  }
}

/** Puts a binary into a node: a hard link, not a symlink (its cache under /root is hidden by the node's own /root). */
export function linkBinary(binary: string, dest: string): void {
  try {
    fs.linkSync(binary, dest);
  } catch {
    fs.copyFileSync(binary, dest);
    fs.chmodSync(dest, 0o755);
  }
}

/** Keeps a run's command line and output beside its node root (read with `npm run fidelity -- --keep`). */
export function keepOutput(dir: string, args: string[], r: NamespaceResult): void {
  fs.writeFileSync(path.join(dir, "command"), `kubeadm ${args.join(" ")}\nexit ${r.code}\n`);
  fs.writeFileSync(path.join(dir, "stdout"), r.stdout);
  fs.writeFileSync(path.join(dir, "stderr"), r.stderr);
}

/** Runs `kubeadm init phase kubelet-start` of real kubeadm (`binary`) for a case on a fresh node under `dir`. */
export async function runReal(dir: string, binary: string, c: FidelityCase): Promise<SideResult> {
  const root = path.join(dir, "root");
  prepareRoot(root);
  linkBinary(binary, hostPath(root, "/usr/local/sbin/kubeadm"));
  fs.writeFileSync(hostPath(root, "/usr/local/sbin/systemctl"), FAKE_SYSTEMCTL, { mode: 0o755 });
  writeInputs(root, c);
  const args = phaseArgs(c);
  const r = await runInNamespace({ root, hostname: HOSTNAME, sockets: socketPaths(c.input), command: ["kubeadm", ...args] });
  keepOutput(dir, args, r);
  const log = hostPath(root, SYSTEMCTL_LOG);
  const systemctlCalls = fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : [];
  return { args, ...r, artifacts: readArtifacts(root, KUBELET_FILES, r.code, r.stderr), systemctlCalls };
}

/** The stand-in's answer to a phase it does not implement. */
const UNSUPPORTED_PHASE = /kubeadm init phase kubelet-start is not supported/;

/**
 * Runs the lab's stand-in for a case on a fresh node under `dir`: `init phase kubelet-start`, or,
 * while the stand-in answers that it has no such phase, a whole `init` (its kubelet-start phase
 * writes the same three files; nothing else is compared).
 */
export async function runStandin(dir: string, version: string, c: FidelityCase): Promise<SideResult> {
  const root = path.join(dir, "root");
  const labDir = path.join(dir, "lab");
  prepareRoot(root);
  fs.mkdirSync(labDir, { recursive: true });
  for (const cmd of STANDIN_COMMANDS) fs.writeFileSync(hostPath(root, `/usr/local/sbin/${cmd}`), renderWrapper(cmd, labDir, HOSTNAME), { mode: 0o755 });
  fs.writeFileSync(hostPath(root, "/etc/lab-node/kubeadm-version"), `${version}\n`);
  writeInputs(root, c);
  const run = (args: string[]) => runInNamespace({ root, hostname: HOSTNAME, sockets: socketPaths(c.input), command: ["kubeadm", ...args] });
  let args = phaseArgs(c);
  let r = await run(args);
  if (r.code !== 0 && UNSUPPORTED_PHASE.test(r.stderr)) {
    args = initArgs(c);
    r = await run(args);
  }
  keepOutput(dir, args, r);
  return { args, ...r, artifacts: readArtifacts(root, KUBELET_FILES, r.code, r.stderr) };
}
