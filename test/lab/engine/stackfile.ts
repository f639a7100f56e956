/**
 * A lab stack file (`Pulumi.<stack>.yaml`) turned into the stack settings the real CLI reads, with the
 * lab's injections, each only when the stack file does not set the value itself:
 *
 * - `kubeadm:sshPrivateKey` (set as a SECRET through the CLI) from `<labDir>/ssh/id_ed25519`;
 * - each node's `hostKey` in `kubeadm:nodes` from `<labDir>/nodes/<name>/node.json`, matched by the
 *   node's `host` (= node.json `address`) and port (22 when unset).
 *
 * Lab-only keys (`lab:*`, read by test/lab/nodes) stay in the file; the program never reads them.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";

export interface LabStackConfig {
  stack: string;
  /** The `config:` map to write into the stack settings (plain values, structured as in the file). */
  config: Record<string, unknown>;
  /** Secret values to set with `pulumi config set --secret`, by key. */
  secrets: Record<string, string>;
  /** What was injected, for the run's log (no values). */
  injected: string[];
}

export class StackFileError extends Error {}

/** `Pulumi.dev.yaml` → `dev`. @throws StackFileError on another name. */
export function stackNameOf(stackFile: string): string {
  const base = path.basename(stackFile);
  const m = /^Pulumi\.(.+)\.ya?ml$/.exec(base);
  if (!m) throw new StackFileError(`${stackFile}: a stack file is named Pulumi.<stack>.yaml`);
  return m[1]!;
}

interface LabNode {
  name: string;
  address: string;
  port?: number;
  hostKey?: string;
}

function labNodes(labDir: string): LabNode[] {
  const dir = path.join(labDir, "nodes");
  if (!fs.existsSync(dir)) return [];
  const out: LabNode[] = [];
  for (const name of fs.readdirSync(dir)) {
    const f = path.join(dir, name, "node.json");
    if (!fs.existsSync(f)) continue;
    try {
      out.push(JSON.parse(fs.readFileSync(f, "utf8")) as LabNode);
    } catch {
      // a node being written by `lab up`: skip it
    }
  }
  return out;
}

/**
 * The stack file's config with the lab injections of the module comment, taken from `labDir`.
 * @throws StackFileError on a badly named file, or one that sets no `sshPrivateKey` when no lab is up at
 *   `labDir` (naming the command that starts it); the fs/YAML errors of an unreadable or unparseable file.
 */
export function readLabStackFile(stackFile: string, project: string, labDir: string): LabStackConfig {
  const stack = stackNameOf(stackFile);
  const doc = (YAML.parse(fs.readFileSync(stackFile, "utf8")) ?? {}) as { config?: Record<string, unknown> };
  const config: Record<string, unknown> = { ...(doc.config ?? {}) };
  const secrets: Record<string, string> = {};
  const injected: string[] = [];
  const key = (k: string) => (config[k] !== undefined ? k : config[`${project}:${k}`] !== undefined ? `${project}:${k}` : undefined);

  if (key("sshPrivateKey") === undefined) {
    const keyFile = path.join(labDir, "ssh", "id_ed25519");
    if (!fs.existsSync(keyFile)) {
      // Without it the CLI fails on the missing config value, which says nothing of the lab.
      throw new StackFileError(
        `${stackFile} sets no sshPrivateKey and no lab is up at ${labDir} to supply its key: start the lab first (npm run lab -- up ${stackFile}; for the demo cluster, npm run lab:demo)`,
      );
    }
    secrets[`${project}:sshPrivateKey`] = fs.readFileSync(keyFile, "utf8");
    injected.push(`${project}:sshPrivateKey (secret) from ${keyFile}`);
  }

  const nodesKey = key("nodes");
  const nodes = nodesKey ? config[nodesKey] : undefined;
  if (nodesKey && Array.isArray(nodes)) {
    const known = labNodes(labDir);
    config[nodesKey] = nodes.map((n: unknown) => {
      if (typeof n !== "object" || n === null) return n;
      const node = n as Record<string, unknown>;
      if (node["hostKey"] !== undefined || typeof node["host"] !== "string") return node;
      const port = typeof node["port"] === "number" ? node["port"] : 22;
      const match = known.find((k) => k.address === node["host"] && (k.port ?? 22) === port && k.hostKey);
      if (!match) return node;
      injected.push(`hostKey of ${String(node["name"] ?? node["host"])} from ${path.join(labDir, "nodes", match.name, "node.json")}`);
      return { ...node, hostKey: match.hostKey };
    });
  }
  return { stack, config, secrets, injected };
}
