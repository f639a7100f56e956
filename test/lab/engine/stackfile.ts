/**
 * Reads a stack file (`Pulumi.<stack>.yaml`) into the config map `pulumi.runtime.setAllConfig` takes.
 *
 * - `config:` maps `kubeadm:key` (or a bare `key`, which Pulumi puts in the project namespace) to a
 *   value; objects and arrays are passed as JSON text, as the Pulumi CLI does for `requireObject`.
 * - A `{ secure: ... }` value (anywhere) is ciphertext only the Pulumi CLI can decrypt: refused.
 * - Lab injections, each only when the stack file does not set the value itself:
 *   - `kubeadm:sshPrivateKey` (secret) from `<labDir>/ssh/id_ed25519`;
 *   - each node's `hostKey` in `kubeadm:nodes` from `<labDir>/nodes/<name>/node.json`, matched by the
 *     node's `host` (= node.json `address`) and port (22 when unset).
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";

export interface StackConfig {
  stack: string;
  /** `namespace:key` → value text, as setAllConfig wants. */
  config: Record<string, string>;
  /** Keys whose values are secret (setAllConfig's secretKeys). */
  secretKeys: string[];
  /** What the runner injected, for the run's log (no values). */
  injected: string[];
}

export class StackFileError extends Error {}

/** `Pulumi.dev.yaml` → `dev`. */
export function stackNameOf(stackFile: string): string {
  const base = path.basename(stackFile);
  const m = /^Pulumi\.(.+)\.ya?ml$/.exec(base);
  if (!m) throw new StackFileError(`${stackFile}: a stack file is named Pulumi.<stack>.yaml`);
  return m[1]!;
}

function findSecure(v: unknown, at: string): string | undefined {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = findSecure(v[i], `${at}[${i}]`);
      if (f) return f;
    }
  } else if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    if ("secure" in o && Object.keys(o).length === 1) return at;
    for (const [k, e] of Object.entries(o)) {
      const f = findSecure(e, `${at}.${k}`);
      if (f) return f;
    }
  }
  return undefined;
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
 * The stack file's config for `setAllConfig`, with the lab injections of the module comment taken
 * from `labDir` (the injected list names the files they came from).
 * @throws StackFileError on a badly named file or an encrypted `secure:` value; the fs/YAML errors of
 *   an unreadable or unparseable file.
 */
export function readStackFile(stackFile: string, project: string, labDir: string): StackConfig {
  const stack = stackNameOf(stackFile);
  const doc = (YAML.parse(fs.readFileSync(stackFile, "utf8")) ?? {}) as { config?: Record<string, unknown> };
  const raw = doc.config ?? {};
  const config: Record<string, string> = {};
  const secretKeys: string[] = [];
  const injected: string[] = [];
  const values: Record<string, unknown> = {};
  for (const [k0, v] of Object.entries(raw)) {
    const key = k0.includes(":") ? k0 : `${project}:${k0}`;
    const secure = findSecure(v, key);
    if (secure !== undefined) {
      throw new StackFileError(
        `${stackFile}: ${secure} is an encrypted "secure:" value, which only the Pulumi CLI can decrypt, ` +
          `and it is not available here. For the lab, put the value in plain text (the lab's own key is ` +
          `injected for ${project}:sshPrivateKey when the file has none).`,
      );
    }
    values[key] = v;
  }

  const keyKey = `${project}:sshPrivateKey`;
  if (values[keyKey] === undefined) {
    const keyFile = path.join(labDir, "ssh", "id_ed25519");
    if (fs.existsSync(keyFile)) {
      values[keyKey] = fs.readFileSync(keyFile, "utf8");
      injected.push(`${keyKey} from ${keyFile}`);
    }
  }
  if (values[keyKey] !== undefined) secretKeys.push(keyKey);

  const nodesKey = `${project}:nodes`;
  const nodes = values[nodesKey];
  if (Array.isArray(nodes)) {
    const known = labNodes(labDir);
    values[nodesKey] = nodes.map((n: unknown) => {
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

  for (const [k, v] of Object.entries(values)) {
    config[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return { stack, config, secretKeys, injected };
}
