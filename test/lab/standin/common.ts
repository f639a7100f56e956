/**
 * TEST DOUBLE, not real kubeadm: shared helpers of the lab's kubeadm/kubectl/systemctl stand-ins.
 *
 * Paths on a node are real paths (`/etc/kubernetes/admin.conf`), prefixed with `$LAB_ROOT` when set
 * (unit tests use a temporary root; on lab nodes the paths are bind mounts and LAB_ROOT is unset).
 * `$LAB_DIR` is `<repo>/.lab` (config.json, the cluster store); `$LAB_NODE` is this node's name,
 * which the stand-ins treat as the node's hostname.
 * Imports are kept to node built-ins so every call (one tsx process each) starts fast.
 */
import * as fs from "fs";
import * as path from "path";

/** A failure with an exit code; the message is printed to stderr as is. */
export class Fail extends Error {
  constructor(message: string, readonly code = 1) {
    super(message);
  }
}

export function labDir(): string {
  const d = process.env.LAB_DIR;
  if (!d) throw new Fail("lab stand-in: LAB_DIR is not set", 2);
  return d;
}

/**
 * The machine's hostname: `LAB_HOSTNAME` when the lab gives the node one (lab:nodes.<name>.hostname),
 * else the lab node's name. kubeadm takes it as the Node name when its configuration names none, and
 * writes `--hostname-override` when the configured name differs.
 */
export function hostname(): string {
  return process.env.LAB_HOSTNAME || nodeName();
}

export function nodeName(): string {
  const n = process.env.LAB_NODE;
  if (!n) throw new Fail("lab stand-in: LAB_NODE is not set", 2);
  return n;
}

/** A node path (`/etc/kubernetes/...`) as seen by this process. */
export function p(nodePath: string): string {
  const root = process.env.LAB_ROOT;
  return root ? path.join(root, nodePath) : nodePath;
}

export function exists(nodePath: string): boolean {
  return fs.existsSync(p(nodePath));
}

export function readText(nodePath: string): string | undefined {
  try {
    return fs.readFileSync(p(nodePath), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Writes atomically (temp file + rename), creating parent directories with `dirMode`. */
export function writeText(nodePath: string, text: string, mode = 0o644, dirMode = 0o755): void {
  const full = p(nodePath);
  const dir = path.dirname(full);
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: dirMode });
  const tmp = `${full}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, full);
}

export function removePath(nodePath: string): void {
  fs.rmSync(p(nodePath), { recursive: true, force: true });
}

/** Removes what a directory holds, keeping the directory itself (a bind mount on lab nodes). */
export function emptyDir(nodePath: string): void {
  const full = p(nodePath);
  if (!fs.existsSync(full)) return;
  for (const e of fs.readdirSync(full)) fs.rmSync(path.join(full, e), { recursive: true, force: true });
}

export interface LabConfig {
  tokenTtlSeconds: number;
  certificateKeyTtlSeconds: number;
  /** Added to the real time wherever the stand-ins read the time (see {@link clockMs}). */
  clockOffsetSeconds: number;
  durations: Record<"init" | "join" | "upgradeApply" | "upgradeNode" | "drain" | "other", number>;
}

/** `$LAB_DIR/config.json`; missing keys take the defaults of test/lab/README.md. */
export function labConfig(): LabConfig {
  let raw: Partial<LabConfig> = {};
  try {
    raw = JSON.parse(fs.readFileSync(path.join(labDir(), "config.json"), "utf8")) as Partial<LabConfig>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const d: Partial<LabConfig["durations"]> = raw.durations ?? {};
  return {
    tokenTtlSeconds: raw.tokenTtlSeconds ?? 86400,
    certificateKeyTtlSeconds: raw.certificateKeyTtlSeconds ?? 7200,
    clockOffsetSeconds: raw.clockOffsetSeconds ?? 0,
    durations: {
      init: d.init ?? 0,
      join: d.join ?? 0,
      upgradeApply: d.upgradeApply ?? 0,
      upgradeNode: d.upgradeNode ?? 0,
      drain: d.drain ?? 0,
      other: d.other ?? 0,
    },
  };
}

/**
 * The lab's clock, in milliseconds since the epoch: the real time plus config.json's
 * `clockOffsetSeconds`, so a test moves time forward (a token's or a certificate key's lifetime) instead
 * of sleeping past it. Durations the stand-ins wait for (step durations, `kubectl wait`) stay real.
 */
export function clockMs(): number {
  return Date.now() + labConfig().clockOffsetSeconds * 1000;
}

/** Sleeps the configured duration of a step (zero by default; a benchmark sets them). */
export async function stepDuration(step: keyof LabConfig["durations"]): Promise<void> {
  const s = labConfig().durations[step];
  if (s > 0) await new Promise((r) => setTimeout(r, s * 1000));
}

export interface Version {
  major: number;
  minor: number;
  patch: number;
  text: string;
}

export function parseVersion(s: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(s.trim());
  if (!m) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return { major, minor, patch, text: `v${major}.${minor}.${patch}` };
}

export function compareVersions(a: Version, b: Version): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/**
 * The node's installed kubelet version: /etc/lab-node/kubelet-version (what a kubelet package install
 * writes in the lab), else the kubeadm version (/etc/lab-node/kubeadm-version; a node installed with one
 * command for both).
 */
export function installedKubeletVersion(): Version {
  const t = readText("/etc/lab-node/kubelet-version");
  const v = t === undefined ? undefined : parseVersion(t);
  return v ?? installedVersion();
}

/**
 * A lab fault, once: when /etc/lab-node/fail-once lists `point` (one point a line), the line is removed
 * and `fail()` is thrown; a test arms it (`join-after-kubelet-start`, `upgrade-apply`, `kubelet-start`, `reset`) to make the next
 * such run fail the way kubeadm would, and the run after that succeed.
 */
export function failOnce(point: string, fail: () => Error): void {
  const t = readText("/etc/lab-node/fail-once");
  if (t === undefined) return;
  const lines = t.split("\n").filter(Boolean);
  if (!lines.includes(point)) return;
  writeText("/etc/lab-node/fail-once", lines.filter((l) => l !== point).map((l) => `${l}\n`).join(""));
  throw fail();
}

/** The node's installed kubeadm version (and the kubelet's, unless kubelet-version says otherwise), from /etc/lab-node/kubeadm-version. */
export function installedVersion(): Version {
  const t = readText("/etc/lab-node/kubeadm-version");
  if (t === undefined) throw new Fail("lab stand-in: /etc/lab-node/kubeadm-version is missing: kubeadm is not installed on this node", 127);
  const v = parseVersion(t);
  if (!v) throw new Fail(`lab stand-in: /etc/lab-node/kubeadm-version holds no version: ${JSON.stringify(t)}`, 2);
  return v;
}

/** Go's `%q` for a string: double quotes, Go escapes for `"`, `\` and non-printable characters. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\x07") out += "\\a";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (ch === "\v") out += "\\v";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out + '"';
}

/** Inverse of {@link goQuote} (also accepts \uXXXX, \UXXXXXXXX and octal escapes). */
export function goUnquote(q: string): string {
  if (q.length < 2 || q[0] !== '"' || q[q.length - 1] !== '"') throw new Error(`not a Go quoted string: ${q}`);
  const body = q.slice(1, -1);
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch !== "\\") {
      if (ch === '"') throw new Error(`unescaped quote in ${q}`);
      out += ch;
      continue;
    }
    const n = body[++i];
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v", "\\": "\\", '"': '"', "'": "'" };
    if (n !== undefined && n in simple) out += simple[n];
    else if (n === "x") { out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16)); i += 2; }
    else if (n === "u") { out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 5), 16)); i += 4; }
    else if (n === "U") { out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 9), 16)); i += 8; }
    else if (n !== undefined && /[0-7]/.test(n)) { out += String.fromCharCode(parseInt(body.slice(i, i + 3), 8)); i += 2; }
    else throw new Error(`bad escape in ${q}`);
  }
  return out;
}

/** Parses a Go duration (`1h`, `30m0s`, `90s`, `0`) into seconds. */
export function parseGoDuration(s: string): number | undefined {
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(s)) !== null) {
    const n = Number(m[1]);
    total += m[2] === "h" ? n * 3600 : m[2] === "m" ? n * 60 : m[2] === "s" ? n : n / 1000;
    consumed = re.lastIndex;
  }
  return consumed === s.length && s.length > 0 ? total : undefined;
}

/** Runs an entry point's main and exits with its code; a {@link Fail} prints its message. */
export function runMain(main: (args: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      if (err instanceof Fail) {
        if (err.message) process.stderr.write(err.message.endsWith("\n") ? err.message : `${err.message}\n`);
        process.exit(err.code);
      }
      process.stderr.write(`lab stand-in crashed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(70);
    },
  );
}

/** A command line as the stand-ins read it. */
export interface Cli {
  positional: string[];
  /** Each flag's last value by its long name; `true` for a flag given bare. */
  flags: Record<string, string | true>;
  /** Every flag as given, in order, by its long name (what {@link boolFlag} reads). */
  given: Array<[name: string, value: string | true]>;
  /** The one-letter shorthand of each long name that has one (pflag names both in its errors). */
  shorthands: Record<string, string>;
}

/**
 * Splits `--name=value`, `--name value` (for names in `valueFlags`), `-x`, and positionals.
 * `shorthands` maps a boolean flag's one-letter shorthand to its long name (kubeadm's `-f` for
 * `--force`): `-f` and `-f=v` count as the long name, and a group of them (`-fy`) as each, as pflag reads
 * them. Lenient where pflag is not: `--f` and `-force` are taken as flags named `f` and `force`.
 */
export function parseCli(args: string[], valueFlags: string[], shorthands: Record<string, string> = {}): Cli {
  const out: Cli = { positional: [], flags: {}, given: [], shorthands: Object.fromEntries(Object.entries(shorthands).map(([s, long]) => [long, s])) };
  const set = (name: string, value: string | true): void => {
    out.flags[name] = value;
    out.given.push([name, value]);
  };
  for (let i = 0; i < args.length; i++) {
    const group = /^-([A-Za-z]{2,})$/.exec(args[i]);
    if (group && [...group[1]].every((c) => shorthands[c] !== undefined)) {
      for (const c of group[1]) set(shorthands[c], true);
      continue;
    }
    const m = /^(--?)([\w-]+)(?:=(.*))?$/s.exec(args[i]);
    if (!m) { out.positional.push(args[i]); continue; }
    const name = m[1] === "-" ? (shorthands[m[2]] ?? m[2]) : m[2];
    if (m[3] !== undefined) set(name, m[3]);
    else if (valueFlags.includes(name)) set(name, args[++i] ?? "");
    else set(name, true);
  }
  return out;
}

/**
 * A boolean flag as kubeadm's and kubectl's flag library (pflag, with Go's strconv.ParseBool) reads it,
 * from the flags as given (`cli.given`, by long name, in order): each occurrence bare, or
 * `=1|t|T|TRUE|true|True`, is true, `=0|f|F|FALSE|false|False` false, and the last one wins; not given,
 * false.
 * @throws what `fail` makes of pflag's message for the first other value: `invalid argument "<v>" for
 *   "--<name>" flag: strconv.ParseBool: parsing "<v>": invalid syntax` (the value in Go's %q;
 *   `"-<s>, --<name>"` for a flag with a shorthand, as pflag names it whichever form was given).
 */
export function boolFlag(cli: Pick<Cli, "given" | "shorthands">, name: string, fail: (message: string) => Error): boolean {
  let on = false;
  const shorthand = cli.shorthands[name];
  for (const [n, v] of cli.given) {
    if (n !== name) continue;
    if (v === true || ["1", "t", "T", "TRUE", "true", "True"].includes(v)) on = true;
    else if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) on = false;
    else {
      const shown = shorthand !== undefined ? `-${shorthand}, --${name}` : `--${name}`;
      throw fail(`invalid argument ${goQuote(v)} for "${shown}" flag: strconv.ParseBool: parsing ${goQuote(v)}: invalid syntax`);
    }
  }
  return on;
}

/** Reads one line from stdin (for kubeadm's `[y/N]` prompts); empty at EOF. */
export function readLineSync(): string {
  try {
    const buf = Buffer.alloc(256);
    const n = fs.readSync(0, buf, 0, buf.length, null);
    return buf.subarray(0, n).toString("utf8").split("\n")[0].trim();
  } catch {
    return "";
  }
}
