/** ssh-keygen wrappers: the lab's client key and each node's ed25519 host key. */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** Generates an ed25519 key pair at `file` (+ `.pub`), replacing any old one. */
export function generateKey(file: string, comment: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.pub`, { force: true });
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file], { stdio: "pipe" });
  fs.chmodSync(file, 0o600);
}

/** `ssh-ed25519 AAAA...` (type and base64, no comment): the form `connection.hostKey` takes. */
export function publicKeyLine(file: string): string {
  const pub = fs.readFileSync(file.endsWith(".pub") ? file : `${file}.pub`, "utf8").trim().split(/\s+/);
  if (pub.length < 2 || !pub[0] || !pub[1]) throw new Error(`${file}: not an OpenSSH public key`);
  return `${pub[0]} ${pub[1]}`;
}

/** [major, minor] of the installed OpenSSH (`ssh -V` prints it on stderr). */
export function opensshVersion(): [number, number] {
  const r = spawnSync("ssh", ["-V"], { encoding: "utf8" });
  const text = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  const m = /OpenSSH_(\d+)\.(\d+)/.exec(text);
  if (!m) throw new Error(`cannot read the OpenSSH version from \`ssh -V\`: ${text || String(r.error)}`);
  return [Number(m[1]), Number(m[2])];
}
