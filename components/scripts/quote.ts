/**
 * The one quoting helper of the node scripts: every value interpolated into a script goes through
 * {@link shellQuote}. Nothing else in the scripts layer builds shell words from data.
 */

/**
 * Quote a string as ONE bash word that bash reads back byte for byte: single quotes around it,
 * each `'` written as `'\''`. Safe for any text, including `$(...)`, backticks, `"`, `\` and
 * newlines, because nothing inside single quotes is special to bash.
 *
 * @param value any string without NUL bytes.
 * @returns the quoted word, e.g. `'it'\''s'` for `it's`; `''` for the empty string.
 * @throws Error when `value` contains a NUL byte (bash cannot carry it in a word).
 */
export function shellQuote(value: string): string {
  if (value.includes("\0")) {
    throw new Error("shellQuote: a NUL byte cannot be passed to bash");
  }
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
