/**
 * Byte-preserving edits of YAML/JSON config files, shared by the kubelet config and
 * ClusterConfiguration transforms. The `yaml` package's Document API finds the nodes and their
 * source ranges; edits are splices of the original text at those ranges, so every byte outside the
 * edited node (order, comments, quoting, indentation) is kept. Input that cannot be edited safely
 * throws {@link FileEditError} instead of being guessed at.
 *
 * A leading UTF-8 byte order mark is kept and left out of the parsed text (otherwise it counts as a
 * column and an inserted key would be indented into the previous value). Inserted lines end the way
 * the file's first line does (`\r\n` or `\n`).
 */
import { Document, isAlias, isMap, isScalar, isSeq, Pair, parseAllDocuments, parse as parseYaml, Scalar, YAMLMap } from "yaml";
import { yaml11PlainSafe } from "./yaml11";

/** A config file this layer refuses to edit; `file` names it (`config.yaml`, `ClusterConfiguration`). */
export class FileEditError extends Error {
  readonly file: string;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = "FileEditError";
    this.file = file;
  }
}

/** One parsed single-document file whose root is a map. */
export interface MapDoc {
  /** The file text after the byte order mark, if any: every range refers to it. */
  text: string;
  /** `"\ufeff"` when the file starts with a UTF-8 byte order mark, else `""`; put back on every result. */
  bom: string;
  /** The file's line ending, from its first line: `"\r\n"` or `"\n"` (also when it has a single line). */
  eol: string;
  file: string;
  doc: Document.Parsed;
  root: YAMLMap;
}

function decorated(node: unknown): string | undefined {
  if (isAlias(node)) return "an alias";
  const n = node as { anchor?: string; tag?: string } | null;
  if (n && n.anchor) return "an anchor";
  if (n && n.tag) return "a tag";
  return undefined;
}

/**
 * Parses `text` as exactly one YAML (or JSON) document whose root is a plain map with scalar keys,
 * no merge keys, and `kind` equal to `kind`.
 * @throws FileEditError on parse errors, duplicate keys, zero or several documents, a non-map root,
 *   an anchor/tag on the root, merge keys, or another kind / apiVersion group.
 */
export function parseMapDoc(fileText: string, file: string, kind: string, apiGroup: string): MapDoc {
  if (typeof fileText !== "string") throw new FileEditError(file, "expected the file text as a string");
  const bom = fileText.startsWith("\ufeff") ? "\ufeff" : "";
  const text = fileText.slice(bom.length);
  const firstNl = text.indexOf("\n");
  const eol = firstNl > 0 && text[firstNl - 1] === "\r" ? "\r\n" : "\n";
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs) || docs.length === 0) throw new FileEditError(file, "is empty (no YAML document)");
  if (docs.length > 1) throw new FileEditError(file, `holds ${docs.length} YAML documents; expected one`);
  const doc = docs[0];
  if (doc.errors.length > 0) throw new FileEditError(file, `cannot be parsed: ${doc.errors[0].message.split("\n")[0]}`);
  const root = doc.contents;
  if (!isMap(root)) throw new FileEditError(file, "the document root is not a map");
  const d = decorated(root);
  if (d) throw new FileEditError(file, `the document root carries ${d}`);
  for (const pair of root.items) {
    if (!isScalar(pair.key)) throw new FileEditError(file, "has a top-level key that is not a scalar");
    if (pair.key.value === "<<" && pair.key.type === "PLAIN") throw new FileEditError(file, "uses a YAML merge key (<<)");
  }
  const k: unknown = root.get("kind", true);
  const kindValue = isScalar(k) ? k.value : undefined;
  if (kindValue !== kind) {
    throw new FileEditError(file, `kind is ${JSON.stringify(kindValue ?? null)}, expected ${JSON.stringify(kind)}`);
  }
  const api: unknown = root.get("apiVersion", true);
  if (api !== undefined && !(isScalar(api) && typeof api.value === "string" && api.value.startsWith(`${apiGroup}/`))) {
    throw new FileEditError(file, `apiVersion must be in the ${apiGroup} group`);
  }
  return { text, bom, eol, file, doc, root };
}

/** The pair with this key, checked to carry no alias, anchor or tag on key or value. */
export function findPair(md: MapDoc, map: YAMLMap, key: string): Pair<Scalar, unknown> | undefined {
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair<Scalar, unknown> | undefined;
  if (!pair) return undefined;
  const dk = decorated(pair.key);
  if (dk) throw new FileEditError(md.file, `the key ${key} carries ${dk}`);
  const dv = decorated(pair.value);
  if (dv) throw new FileEditError(md.file, `the value of ${key} carries ${dv}`);
  return pair;
}

/**
 * go-yaml v2's map key order (keyList.Less), which kubeadm's marshaller (sigs.k8s.io/yaml over
 * go-yaml v2) uses: rune by rune; a letter beats nothing, a non-letter sorts before a letter, runs
 * of digits compare as numbers. Reproduced from memory of go-yaml v2 sorter.go; the simple
 * camelCase keys of kubeadm's configs only exercise the letter-vs-letter rule.
 */
export function goYamlKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  const isLetter = (c: string) => /\p{L}/u.test(c);
  const isDigit = (c: string | undefined) => c !== undefined && /[0-9]/.test(c);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return bl;
    let ai = i;
    let bi = i;
    let an = 0;
    let bn = 0;
    for (; isDigit(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; isDigit(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i] < br[i];
  }
  return ar.length < br.length;
}

function keyOf(p: Pair): string {
  return String((p.key as Scalar).value);
}

/** Index before which `key` goes: sorted position when the keys are sorted, else the end. */
function insertIndex(map: YAMLMap, key: string): number {
  const keys = map.items.map(keyOf);
  const sorted = keys.every((k, i) => i === 0 || goYamlKeyLess(keys[i - 1], k));
  if (!sorted) return keys.length;
  const i = keys.findIndex((k) => goYamlKeyLess(key, k));
  return i === -1 ? keys.length : i;
}

function lineStart(text: string, pos: number): number {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

/** Position just past the line holding `pos - 1` (past its newline), or the text end. */
function lineEndAfter(text: string, pos: number): number {
  if (pos > 0 && text[pos - 1] === "\n") return pos;
  const nl = text.indexOf("\n", pos);
  return nl === -1 ? text.length : nl + 1;
}

/** Start of the comment lines directly above `start` (a line start), so an insertion keeps them with their key. */
function commentBlockStart(text: string, start: number): number {
  let s = start;
  while (s > 0) {
    const prev = lineStart(text, s - 1);
    if (!/^[ \t]*#/.test(text.slice(prev, s))) break;
    s = prev;
  }
  return s;
}

function range(node: unknown): [number, number, number] {
  const r = (node as { range?: [number, number, number] } | null)?.range;
  if (!r) throw new Error("internal: node without a source range");
  return r;
}

/** Start and end (past the newline) of a block-map pair's lines. */
function blockPairSpan(md: MapDoc, pair: Pair): [number, number] {
  const start = lineStart(md.text, range(pair.key)[0]);
  if (!/^[ \t]*$/.test(md.text.slice(start, range(pair.key)[0]))) {
    throw new FileEditError(md.file, `the key ${keyOf(pair)} does not start its own line`);
  }
  const end = pair.value === null ? range(pair.key)[2] : range(pair.value)[2];
  return [start, lineEndAfter(md.text, end)];
}

/** Column of a block map's keys. */
function keyColumn(md: MapDoc, map: YAMLMap): number {
  const first = range(map.items[0].key)[0];
  return first - lineStart(md.text, first);
}

/**
 * Inserts `key` (with already rendered text) into `map`: at its sorted position when the keys are
 * sorted (go-yaml order), else at the end.
 * - Block map: one or more lines, `render(indent)` returns them with the trailing newline (`\n`;
 *   written with the file's own line ending). Comment lines directly above the key it goes before
 *   stay with that key.
 * - Flow map (JSON): `"key": value` with the separators the map already uses.
 * @param flowValue the value text for a flow map.
 */
export function insertPair(
  md: MapDoc,
  map: YAMLMap,
  key: string,
  render: (indent: string) => string,
  flowValue: string,
): string {
  const { text } = md;
  if (map.flow) {
    const items = map.items;
    if (items.length === 0) {
      const open = range(map)[0];
      if (text[open] !== "{") throw new FileEditError(md.file, "cannot locate the opening brace of a flow map");
      return md.bom + text.slice(0, open + 1) + `${JSON.stringify(key)}: ${flowValue}` + text.slice(open + 1);
    }
    const first = items[0];
    if (first.value === null) throw new FileEditError(md.file, "flow map entry without a value");
    const keyText = (first.key as Scalar).type === "PLAIN" ? key : JSON.stringify(key);
    const keySep = text.slice(range(first.key)[1], range(first.value)[0]);
    let sep: string;
    if (items.length >= 2) {
      sep = text.slice(range(first.value)[1], range(items[1].key)[0]);
    } else {
      const lead = text.slice(range(map)[0] + 1, range(first.key)[0]);
      const nl = lead.lastIndexOf("\n");
      sep = nl === -1 ? ", " : `,${lead[nl - 1] === "\r" ? "\r" : ""}${lead.slice(nl)}`;
    }
    if (!/^\s*,\s*$/.test(sep) || !/^\s*:\s*$/.test(keySep)) {
      throw new FileEditError(md.file, "flow map holds comments or unusual separators; refusing to edit");
    }
    const at = insertIndex(map, key);
    const entry = keyText + keySep + flowValue;
    if (at < items.length) {
      const pos = range(items[at].key)[0];
      return md.bom + text.slice(0, pos) + entry + sep + text.slice(pos);
    }
    const last = items[items.length - 1];
    const pos = range(last.value ?? last.key)[1];
    return md.bom + text.slice(0, pos) + sep + entry + text.slice(pos);
  }
  if (map.items.length === 0) throw new FileEditError(md.file, "cannot insert into an empty block map");
  const indent = " ".repeat(keyColumn(md, map));
  const lines = render(indent).replace(/\r?\n/g, md.eol);
  const at = insertIndex(map, key);
  if (at < map.items.length) {
    const pos = commentBlockStart(text, blockPairSpan(md, map.items[at])[0]);
    return md.bom + text.slice(0, pos) + lines + text.slice(pos);
  }
  const end = blockPairSpan(md, map.items[map.items.length - 1])[1];
  const nl = end > 0 && text[end - 1] !== "\n" ? md.eol : "";
  return md.bom + text.slice(0, end) + nl + lines + text.slice(end);
}

/** Removes a pair of a block map: its lines (comment lines above it are kept). */
export function removeBlockPair(md: MapDoc, map: YAMLMap, pair: Pair): string {
  if (map.flow) throw new FileEditError(md.file, `${keyOf(pair)} is in a flow-style map; refusing to edit`);
  const [start, end] = blockPairSpan(md, pair);
  return md.bom + md.text.slice(0, start) + md.text.slice(end);
}

const PLAIN_SAFE = /^[A-Za-z0-9._/@+-][A-Za-z0-9._/@+:-]*$/;

/**
 * Replaces a scalar value with `value` (a string or boolean), keeping its quoting style where it
 * can: double-quoted stays double-quoted, single-quoted stays single-quoted, plain stays plain when
 * the new text reads back as the same value, else it becomes double-quoted. An empty value
 * (`key:`) gets ` value`.
 * @throws FileEditError for block scalars (`|`, `>`) and non-scalar values.
 */
export function replaceScalar(md: MapDoc, pair: Pair, value: string | boolean, inFlow: boolean): string {
  const v = pair.value;
  if (!isScalar(v)) {
    const what = isMap(v) ? "a map" : isSeq(v) ? "a list" : "not a scalar";
    throw new FileEditError(md.file, `the value of ${keyOf(pair)} is ${what}`);
  }
  let out: string;
  if (typeof value === "boolean") {
    out = String(value);
  } else if (v.type === "QUOTE_SINGLE") {
    out = `'${value.replace(/'/g, "''")}'`;
  } else if (v.type === "PLAIN" && !inFlow && plainSafe(value)) {
    out = value;
  } else if (v.type === "PLAIN" || v.type === "QUOTE_DOUBLE") {
    out = JSON.stringify(value);
  } else {
    throw new FileEditError(md.file, `the value of ${keyOf(pair)} is a block scalar; refusing to edit`);
  }
  const [start, end] = range(v);
  if (start === end && md.text[start - 1] === ":") out = ` ${out}`;
  return md.bom + md.text.slice(0, start) + out + md.text.slice(end);
}

/** Whether `value` can be written plain: safe characters, and read back as itself in YAML 1.2, 1.1 and go-yaml v2. */
function plainSafe(value: string): boolean {
  return PLAIN_SAFE.test(value) && parseYaml(value) === value && yaml11PlainSafe(value);
}

/**
 * Renders a string as a YAML value (or key) for a new block-map line: plain when it reads back as the
 * same string in YAML 1.2, YAML 1.1 and go-yaml v2 (kubeadm's and the kubelet's decoder), else
 * double-quoted.
 */
export function blockScalarText(value: string): string {
  return plainSafe(value) ? value : JSON.stringify(value);
}

/** Indentation step used by nested block maps under `root`, or 2 when there is none. */
export function nestedIndentStep(md: MapDoc, root: YAMLMap): number {
  for (const p of root.items) {
    const v = p.value;
    if ((isMap(v) || isSeq(v)) && !v.flow && v.items.length > 0 && isMap(v)) {
      const step = keyColumn(md, v) - keyColumn(md, root);
      if (step > 0) return step;
    }
  }
  return 2;
}
