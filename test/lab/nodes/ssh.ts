/** OpenSSH client to the nodes: the lab key, a known_hosts made from node.json, strict checking. */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { NodeInfo, readNodeFile } from "./nodefile";
import { DEFAULT_LAB_DIR, labPaths } from "./paths";

/** A known_hosts line: `127.0.0.2 ssh-ed25519 AAAA...` (`[host]:port` when port is not 22). */
export function knownHostsLine(address: string, port: number, hostKey: string): string {
  return `${port === 22 ? address : `[${address}]:${port}`} ${hostKey}`;
}

export function writeKnownHosts(labDir: string, nodes: NodeInfo[]): string {
  const file = labPaths(labDir).knownHosts;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, nodes.map((n) => knownHostsLine(n.address, n.port, n.hostKey)).join("\n") + "\n");
  return file;
}

/** ssh arguments up to and including `root@address` (add `--` and a command after them). */
export function sshArgs(labDir: string, node: Pick<NodeInfo, "address" | "port">, knownHostsFile?: string): string[] {
  const p = labPaths(labDir);
  return [
    "-F", "/dev/null",
    "-i", p.clientKey,
    "-o", "IdentitiesOnly=yes",
    "-o", "IdentityAgent=none",
    "-o", "BatchMode=yes",
    "-o", `UserKnownHostsFile=${knownHostsFile ?? p.knownHosts}`,
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "StrictHostKeyChecking=yes",
    "-o", "UpdateHostKeys=no",
    "-o", "CheckHostIP=no",
    "-o", "HostKeyAlgorithms=ssh-ed25519",
    "-o", "ConnectTimeout=10",
    "-o", "LogLevel=ERROR",
    "-p", String(node.port),
    `root@${node.address}`,
  ];
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  labDir?: string;
  /** pin this host key instead of the node's recorded one (to test that a wrong key is refused) */
  hostKey?: string;
  timeoutMs?: number;
  /** More ssh client options (`-o Name=value` pairs), before the destination. */
  clientOptions?: string[];
}

/** Runs `command` on a node over SSH (bash -c by root's login shell); never throws on a non-zero exit. */
export async function runOnNode(name: string, command: string, stdin?: string, opts: RunOptions = {}): Promise<RunResult> {
  const labDir = path.resolve(opts.labDir ?? DEFAULT_LAB_DIR);
  const node = readNodeFile(labDir, name);
  let tmp: string | undefined;
  let knownHosts: string | undefined;
  if (opts.hostKey !== undefined) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lab-kh-"));
    knownHosts = path.join(tmp, "known_hosts");
    fs.writeFileSync(knownHosts, knownHostsLine(node.address, node.port, opts.hostKey) + "\n");
  }
  try {
    return await new Promise<RunResult>((resolve, reject) => {
      const args = sshArgs(labDir, node, knownHosts);
      args.splice(args.length - 1, 0, ...(opts.clientOptions ?? []));
      const child = spawn("ssh", [...args, "--", command], { stdio: ["pipe", "pipe", "pipe"] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (b: Buffer) => out.push(b));
      child.stderr.on("data", (b: Buffer) => err.push(b));
      const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60000);
      child.on("error", reject);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        resolve({ code: code ?? (signal ? 255 : 1), stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
      });
      child.stdin.on("error", () => undefined);
      child.stdin.end(stdin ?? "");
    });
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}
