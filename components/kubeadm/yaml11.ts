/**
 * YAML text that kubeadm reads back as exactly the values it was made from.
 *
 * kubeadm (and the kubelet) decode YAML with sigs.k8s.io/yaml, which runs go-yaml v2: YAML 1.1
 * resolution, so a plain `no`, `yes`, `on`, `off`, `y`, `n`, `~`, `null`, `0777`, `1:20` (base 60),
 * `2001-12-14` is a boolean, a null, a number or a timestamp there, not a string, even though YAML 1.2
 * (the `yaml` package's default) reads them as strings. go-yaml v2 also goes beyond YAML 1.1 for
 * numbers: it drops every `_` and tries Go's `strconv.ParseInt(s, 0, 64)` (which takes `0o17`, `0b101`,
 * `0x1F`, and a leading `0` as octal), then `ParseFloat` for anything shaped like `[-+]?(.N|N(.N)?)(e[-+]?N)?`
 * (so `089` is a float). A string node name, taint value or kubelet flag value of that shape must be
 * quoted, or kubeadm fails to decode the config (a number for a string field) or reads another value.
 */
import { Document, isScalar, parse, visit } from "yaml";

/** go-yaml v2's number shapes, after it has removed every `_` (resolve.go: ParseInt base 0, yamlStyleFloat). */
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/;
const GO_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** go-yaml v2's timestamp layouts (`2006-1-2`, with an optional `T`/`t`/space time part). */
const GO_TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$/;

/** Whether go-yaml v2 reads the plain scalar `s` as something other than a string, beyond YAML 1.1's own rules. */
function goYamlReadsOtherwise(s: string): boolean {
  const plain = s.replace(/_/g, "");
  return GO_INT.test(plain) || GO_FLOAT.test(plain) || GO_TIMESTAMP.test(s) || s === "<<" || s === "=";
}

/**
 * Whether `s` written as a plain (unquoted) scalar reads back as the string `s` both in YAML 1.1 and in
 * go-yaml v2. False for `no`, `on`, `~`, `null`, `0o17`, `1:20`, `2001-12-14`, `<<`, and for any text
 * that is not a single plain scalar at all (`a: b`, `- x`, `#c`, leading or trailing spaces).
 */
export function yaml11PlainSafe(s: string): boolean {
  if (s === "" || s.trim() !== s || goYamlReadsOtherwise(s)) return false;
  try {
    return parse(s, { version: "1.1" }) === s;
  } catch {
    return false;
  }
}

/**
 * `value` as YAML (block style, no line folding), every string key and value that would not read back
 * as that same string in YAML 1.1 or go-yaml v2 double-quoted; other strings stay plain; booleans and
 * numbers stay what they are (`<<` is written `!!str "<<"`). No `%YAML` directive is written.
 */
export function stringifyYaml11(value: unknown): string {
  const doc = new Document(value, { version: "1.1" });
  visit(doc, {
    Scalar(_key, node) {
      if (!isScalar(node) || typeof node.value !== "string" || !goYamlReadsOtherwise(node.value)) return;
      node.type = "QUOTE_DOUBLE";
      // The `yaml` package writes `<<` bare (the merge key) unless the node carries an explicit str tag.
      if (node.value === "<<") node.tag = "tag:yaml.org,2002:str";
    },
  });
  return doc.toString({ lineWidth: 0 });
}
