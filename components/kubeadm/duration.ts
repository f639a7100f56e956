/**
 * kubeadm's duration text as this project passes it (`kubeadm token create --ttl 2h0m0s`): hours,
 * minutes, seconds, each optional, in that order (a subset of Go's time.ParseDuration).
 */

/**
 * Seconds in `XhYmZs` text, e.g. 7200 for `2h0m0s` or `2h`.
 * @returns undefined when the text is not of that form (empty, other units, signs, fractions).
 */
export function durationSeconds(text: unknown): number | undefined {
  const m = typeof text === "string" && text !== "" ? /^(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,9})s)?$/.exec(text) : null;
  return m === null ? undefined : Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}
