/**
 * Secret handling for values the mock monitor hands to `newResource`.
 *
 * Under `pulumi.runtime.setMocks`, inputs arrive through `deserializeProperties`: a secret input is
 * delivered as the RPC secret wrapper `{ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
 * value }` (at any depth of an object; arrays containing a secret are wrapped whole), plain values as is.
 * Unknown values (preview only) arrive as the SDK's `Unknown` singleton (`__pulumiUnknown: true`).
 */

export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** The RPC sentinel for an unknown value: returned in preview for outputs not yet known. */
export const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function isSecretWrapper(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

export function isUnknownValue(v: unknown): boolean {
  return (
    v === UNKNOWN_VALUE ||
    (typeof v === "object" && v !== null && (v as Record<string, unknown>)["__pulumiUnknown"] === true)
  );
}

export function wrapSecret<T>(value: T): { value: T } {
  return { [SIG_KEY]: SECRET_SIG, value } as unknown as { value: T };
}

/**
 * Connection fields that are not sensitive. @pulumi/command's SDK wraps the WHOLE `connection` in
 * `pulumi.secret(...)`, so without this every host name and `root` would be masked in the log.
 * (Their values still count as secret for the Pulumi outputs; only the log masking skips them.)
 */
const NOT_SENSITIVE = new Set(["host", "port", "user", "hostKey", "dialErrorLimit", "perDialTimeout", "agentSocketPath", "proxyHost", "proxyPort", "proxyUser"]);

export interface Unwrapped {
  /** The value with every secret wrapper removed. */
  value: unknown;
  /** Every string found inside a secret wrapper (to mask in printed text). */
  secretStrings: string[];
  /** Top-level keys whose value was or contained a secret. */
  secretKeys: Set<string>;
  /** True when the value is or contains an unknown (preview). */
  hasUnknown: boolean;
}

/** Removes secret wrappers at any depth, remembering the secret strings and which top-level keys held them. */
export function unwrapSecrets(input: unknown): Unwrapped {
  const secretStrings: string[] = [];
  const secretKeys = new Set<string>();
  let hasUnknown = false;
  const collect = (v: unknown, key?: string): void => {
    if (key !== undefined && NOT_SENSITIVE.has(key)) return;
    if (typeof v === "string") secretStrings.push(v);
    else if (Array.isArray(v)) v.forEach((e) => collect(e));
    else if (typeof v === "object" && v !== null) for (const [k, e] of Object.entries(v)) collect(e, k);
  };
  const walk = (v: unknown, inSecret: boolean, top: string | undefined, key?: string): unknown => {
    if (isUnknownValue(v)) {
      hasUnknown = true;
      return UNKNOWN_VALUE;
    }
    if (isSecretWrapper(v)) {
      if (top !== undefined) secretKeys.add(top);
      const inner = walk(v.value, true, top);
      collect(inner, key);
      return inner;
    }
    if (Array.isArray(v)) return v.map((e) => walk(e, inSecret, top));
    if (typeof v === "object" && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, e] of Object.entries(v)) {
        if (e === undefined) continue;
        out[k] = walk(e, inSecret, top ?? k, k);
      }
      return out;
    }
    return v;
  };
  const value = walk(input, false, undefined);
  return { value, secretStrings, secretKeys, hasUnknown };
}

/** Masks known secret strings in text. Strings shorter than 4 characters are not masked (too noisy). */
export class Masker {
  private readonly secrets = new Set<string>();

  add(...values: Array<string | undefined>): void {
    for (const v of values) {
      if (v === undefined || v.length < 4) continue;
      this.secrets.add(v);
      // A multi-line secret (a private key) also masked line by line, in case output splits it.
      for (const line of v.split("\n")) if (line.trim().length >= 8) this.secrets.add(line.trim());
    }
  }

  mask(text: string): string {
    let out = text;
    const sorted = [...this.secrets].sort((a, b) => b.length - a.length);
    for (const s of sorted) out = out.split(s).join("[secret]");
    return out;
  }
}
