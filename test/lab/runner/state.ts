/**
 * The runner's state file: what `pulumi up` would have recorded in the stack's checkpoint, reduced to
 * what the command provider's rules need. Format (version 1), JSON:
 *
 *   { "version": 1, "stack": "dev", "nextSeq": 7,
 *     "resources": { "<name>": StateRecord, ... },
 *     "pendingDeletes": [ StateRecord, ... ] }        // replaced resources whose old delete has not run yet
 *
 * StateRecord: { name, type, id, seq (registration order across runs), dependencies (names),
 *   inputsHash, triggersHash (HMAC-SHA256 of the canonical JSON of the inputs without / of `triggers`;
 *   secrets compared by value, never stored), outputs ({ stdout, stderr } in plain text, ONLY when not
 *   secret), sealed (AES-256-GCM of { props, secretOutputs }: the inputs the old `delete` needs, which
 *   hold the SSH private key, and the secret outputs) }.
 *
 * The key (32 random bytes, hex) lives in `state.key` beside the state file, mode 0600, created on
 * first use; it never leaves the machine (.lab/ is git-ignored). Losing it makes the sealed parts
 * unreadable: `destroy` then cannot run old deletes, and the runner says so.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";

export interface SealedBlob {
  alg: "aes-256-gcm";
  iv: string;
  tag: string;
  data: string;
}

export interface StateRecord {
  name: string;
  type: string;
  id: string;
  seq: number;
  dependencies: string[];
  inputsHash: string;
  triggersHash: string;
  outputs: Record<string, string>;
  sealed: SealedBlob;
}

export interface StateFile {
  version: 1;
  stack: string;
  nextSeq: number;
  resources: Record<string, StateRecord>;
  pendingDeletes: StateRecord[];
  /**
   * The stack's outputs after the last successful apply, secret ones left out: what a
   * `pulumi.StackReference` to this very stack reads (the root program reads its last
   * `kubernetesVersion` this way).
   */
  stackOutputs?: Record<string, unknown>;
}

/** What a sealed blob holds once opened. */
export interface SealedContent {
  /** Inputs needed to run the resource's `delete` later (connection, delete, environment, stdin, logging...). */
  props: Record<string, unknown>;
  /** Outputs that are secret (additionalSecretOutputs, or `logging: "none"`). */
  secretOutputs: Record<string, string>;
}

export function emptyState(stack: string): StateFile {
  return { version: 1, stack, nextSeq: 0, resources: {}, pendingDeletes: [] };
}

export function loadState(statePath: string, stack: string): StateFile {
  if (!fs.existsSync(statePath)) return emptyState(stack);
  const parsed = JSON.parse(fs.readFileSync(statePath, "utf8")) as StateFile;
  if (parsed.version !== 1) throw new Error(`${statePath}: unsupported state version ${String(parsed.version)}`);
  parsed.pendingDeletes ??= [];
  return parsed;
}

/** Writes atomically (temp file + rename), mode 0600. */
export function saveState(statePath: string, state: StateFile): void {
  fs.mkdirSync(path.dirname(statePath), { recursive: true });
  const tmp = `${statePath}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  fs.renameSync(tmp, statePath);
}

/** Canonical JSON: object keys sorted, undefined dropped. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((e) => canonicalJson(e === undefined ? null : e)).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const keys = Object.keys(v as Record<string, unknown>)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** Seals and opens state secrets, and keys the input hashes, with one per-state-directory key. */
export class StateCrypto {
  private readonly key: Buffer;

  constructor(stateDir: string) {
    const keyPath = path.join(stateDir, "state.key");
    fs.mkdirSync(stateDir, { recursive: true });
    if (!fs.existsSync(keyPath)) {
      fs.writeFileSync(keyPath, crypto.randomBytes(32).toString("hex") + "\n", { mode: 0o600, flag: "wx" });
    }
    this.key = Buffer.from(fs.readFileSync(keyPath, "utf8").trim(), "hex");
    if (this.key.length !== 32) throw new Error(`${keyPath}: not a 32-byte hex key`);
  }

  hash(v: unknown): string {
    return crypto.createHmac("sha256", this.key).update(canonicalJson(v)).digest("hex");
  }

  seal(content: SealedContent): SealedBlob {
    const iv = crypto.randomBytes(12);
    const c = crypto.createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([c.update(JSON.stringify(content), "utf8"), c.final()]);
    return { alg: "aes-256-gcm", iv: iv.toString("base64"), tag: c.getAuthTag().toString("base64"), data: data.toString("base64") };
  }

  open(blob: SealedBlob): SealedContent {
    const d = crypto.createDecipheriv("aes-256-gcm", this.key, Buffer.from(blob.iv, "base64"));
    d.setAuthTag(Buffer.from(blob.tag, "base64"));
    const text = Buffer.concat([d.update(Buffer.from(blob.data, "base64")), d.final()]).toString("utf8");
    return JSON.parse(text) as SealedContent;
  }
}

/**
 * Deletion order for records: a record is deleted only after every record that depends on it
 * (recorded dependencies), ties broken by reverse registration order (`seq`).
 */
export function reverseDependencyOrder(records: StateRecord[]): StateRecord[] {
  const remaining = [...records].sort((a, b) => b.seq - a.seq);
  const out: StateRecord[] = [];
  while (remaining.length > 0) {
    const names = new Set(remaining.map((r) => r.name));
    const dependedOn = new Set<string>();
    for (const r of remaining) for (const d of r.dependencies) if (d !== r.name && names.has(d)) dependedOn.add(d);
    let idx = remaining.findIndex((r) => !dependedOn.has(r.name));
    if (idx < 0) idx = 0; // a cycle cannot come from Pulumi; fall back to seq order
    out.push(remaining.splice(idx, 1)[0]!);
  }
  return out;
}
