/**
 * A lab stack's settings file, `Pulumi.<stack>.yaml`, written from the lab stack file on every lab
 * command, with its secret values encrypted by the real CLI (`pulumi config set --secret`, the value on
 * stdin, never in a command line) only when they changed.
 *
 * Each `config set` is a CLI process (about 0.4 s on 2 idle cores) that re-derives the passphrase key; a
 * lab command would pay it for the same SSH key every time. So the ciphertext the CLI wrote is kept
 * beside the settings file, in `.secrets.<stack>.json` (per key: the SHA-256 of the value and the
 * `secure:` ciphertext, with the stack's `encryptionsalt`), and carried into the next settings file when
 * the value's digest and the salt are both unchanged. A changed value, a new salt (the stack removed and
 * made again) or a missing or unreadable record sets the value through the CLI again. The record holds
 * no plain text: a digest of the lab's own key, in the lab folder that holds the key itself.
 */
import { createHash } from "crypto";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";

/** How to run the lab's Pulumi CLI: its binary, the project folder, the environment. */
export interface CliCall {
  binary: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

interface SecretRecord {
  salt: string;
  entries: Record<string, { digest: string; secure: string }>;
}

const digestOf = (value: string) => createHash("sha256").update(value, "utf8").digest("hex");

/** The record file beside a settings file `Pulumi.<stack>.yaml`. */
export function secretRecordFile(settingsFile: string, stack: string): string {
  return path.join(path.dirname(settingsFile), `.secrets.${stack}.json`);
}

function readRecord(file: string): SecretRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(file, "utf8")) as SecretRecord;
    return typeof r.salt === "string" && typeof r.entries === "object" && r.entries !== null ? r : undefined;
  } catch {
    return undefined;
  }
}

const readSettings = (file: string) => (fs.existsSync(file) ? ((YAML.parse(fs.readFileSync(file, "utf8")) ?? {}) as Record<string, unknown>) : {});

/**
 * Writes the settings file `file` of stack `stack`: every top-level field of the current file but
 * `config` (the salt the CLI made at stack init among them), `config` as given, and each of `secrets`
 * (config key to plain value) as a `secure:` value: carried over from the record when its digest and
 * the salt match, else set through `pulumi config set --secret --stack <stack> <key>`.
 * @returns the keys set through the CLI this time (empty when every secret was carried over), in
 *   `secrets`' order.
 * @throws Error with the CLI's message when `config set` fails; the fs/YAML errors of an unreadable file.
 */
export function writeSettings(file: string, stack: string, config: Record<string, unknown>, secrets: Record<string, string>, cli: CliCall): string[] {
  const { config: _old, ...kept } = readSettings(file);
  const salt = typeof kept["encryptionsalt"] === "string" ? kept["encryptionsalt"] : undefined;
  const recordFile = secretRecordFile(file, stack);
  const record = readRecord(recordFile);
  const carried: Record<string, unknown> = {};
  const toSet: string[] = [];
  for (const [k, v] of Object.entries(secrets)) {
    const e = salt !== undefined && record?.salt === salt ? record.entries[k] : undefined;
    if (e !== undefined && e.digest === digestOf(v)) carried[k] = { secure: e.secure };
    else toSet.push(k);
  }
  fs.writeFileSync(file, YAML.stringify({ ...kept, config: { ...config, ...carried } }));
  for (const k of toSet) {
    execFileSync(cli.binary, ["config", "set", "--secret", "--stack", stack, k], { cwd: cli.cwd, env: cli.env, input: secrets[k], stdio: ["pipe", "ignore", "pipe"] });
  }
  if (toSet.length > 0 || record === undefined) {
    const written = readSettings(file);
    const writtenConfig = (written["config"] ?? {}) as Record<string, unknown>;
    const entries: SecretRecord["entries"] = {};
    for (const [k, v] of Object.entries(secrets)) {
      const secure = (writtenConfig[k] as { secure?: unknown } | undefined)?.secure;
      if (typeof secure === "string") entries[k] = { digest: digestOf(v), secure };
    }
    const newSalt = written["encryptionsalt"];
    if (typeof newSalt === "string") fs.writeFileSync(recordFile, JSON.stringify({ salt: newSalt, entries } satisfies SecretRecord));
  }
  return toSet;
}
