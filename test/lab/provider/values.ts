/**
 * Property values as the engine hands them to a provider that accepts secrets (Struct form): a secret
 * is `{ [SIG]: SECRET_SIG, value }`, an unknown (a preview value not yet known) is the UNKNOWN string.
 * Pure functions, no I/O.
 */

/** The special-signature key of a wrapped value (pulumi's `specialSigKey`). */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** The signature of a secret (pulumi's `specialSecretSig`). */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** An unknown value in a preview (pulumi's `unknownValue`). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True for a wrapped secret. */
export function isSecret(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** The value wrapped as a secret. */
export function secret(v: unknown): unknown {
  return isSecret(v) ? v : { [SIG_KEY]: SECRET_SIG, value: v };
}

/** The value with every secret wrapper removed, deep. */
export function reveal(v: unknown): unknown {
  if (isSecret(v)) return reveal(v.value);
  if (Array.isArray(v)) return v.map(reveal);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, e]) => [k, reveal(e)]));
  return v;
}

/** True when the value holds an unknown anywhere. */
export function hasUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(hasUnknown);
  if (typeof v === "object" && v !== null) return Object.values(v).some(hasUnknown);
  return false;
}

/** Deep equality of two plain JSON values (secrets compared by what they hold). */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(reveal(a))) === JSON.stringify(canonical(reveal(b)));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === "object" && v !== null) {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined && (v as Record<string, unknown>)[k] !== null)
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}
