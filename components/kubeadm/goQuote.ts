/**
 * Go string quoting (`strconv.Quote`, i.e. `fmt`'s `%q` on a string) and unquoting
 * (`strconv.Unquote` of a double-quoted literal), for the files kubeadm writes with `%q`.
 */

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/**
 * Go `strconv.Quote(s)`: double quotes; `\a \b \f \n \r \t \v \\ \"` escaped; other C0 controls and
 * DEL as `\xHH`; printable Unicode (Go's `unicode.IsPrint`: letters, marks, numbers, punctuation,
 * symbols, ASCII space) kept; other code points as `\uHHHH` / `\UHHHHHHHH` (lower-case hex).
 * Go quotes bytes; a JavaScript string is UTF-16, so a lone surrogate (not valid UTF-8 in Go
 * either) is refused rather than guessed.
 * @throws Error on a lone surrogate.
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) throw new Error("goQuote: string holds a lone UTF-16 surrogate");
    switch (ch) {
      case "\x07": out += "\\a"; continue;
      case "\b": out += "\\b"; continue;
      case "\f": out += "\\f"; continue;
      case "\n": out += "\\n"; continue;
      case "\r": out += "\\r"; continue;
      case "\t": out += "\\t"; continue;
      case "\v": out += "\\v"; continue;
      case "\\": out += "\\\\"; continue;
      case '"': out += '\\"'; continue;
    }
    if (cp === 0x20 || (cp > 0x20 && cp < 0x7f)) out += ch;
    else if (cp < 0x20 || cp === 0x7f) out += "\\x" + hex(cp, 2);
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x10000) out += "\\u" + hex(cp, 4);
    else out += "\\U" + hex(cp, 8);
  }
  return out + '"';
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", '"': '"',
};

/**
 * Go `strconv.Unquote` of a double-quoted literal (the only form `%q` produces). Accepts the escapes
 * Go accepts in a double-quoted string: the simple ones, `\xHH`, `\ooo`, `\uHHHH`, `\UHHHHHHHH`.
 * `\x` and octal escapes are taken as code points below 0x100 (Go would take them as raw bytes;
 * kubeadm's own output never holds them for ASCII input).
 * @throws Error when `quoted` is not exactly one valid double-quoted Go literal.
 */
export function goUnquote(quoted: string): string {
  if (quoted.length < 2 || quoted[0] !== '"' || quoted[quoted.length - 1] !== '"') {
    throw new Error("not a double-quoted string");
  }
  const body = quoted.slice(1, -1);
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '"') throw new Error(`unescaped quote at offset ${i + 1}`);
    if (c === "\n") throw new Error(`newline inside a quoted string at offset ${i + 1}`);
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) throw new Error("string ends with a lone backslash");
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      continue;
    }
    const widths: Record<string, number> = { x: 2, u: 4, U: 8 };
    let digits: string;
    let value: number;
    if (e in widths) {
      digits = body.slice(i + 1, i + 1 + widths[e]);
      if (!new RegExp(`^[0-9a-fA-F]{${widths[e]}}$`).test(digits)) throw new Error(`bad \\${e} escape at offset ${i}`);
      value = parseInt(digits, 16);
    } else if (/[0-7]/.test(e)) {
      digits = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 255) throw new Error(`bad octal escape at offset ${i}`);
      value = parseInt(digits, 8);
      i -= 1;
    } else {
      throw new Error(`unknown escape \\${e} at offset ${i}`);
    }
    if (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) throw new Error(`escape out of range at offset ${i}`);
    out += String.fromCodePoint(value);
    i += digits.length;
  }
  return out;
}
