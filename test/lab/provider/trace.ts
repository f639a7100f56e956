/**
 * An optional record of the provider's calls, for reading where a run's time goes: with
 * `LAB_PROVIDER_TRACE=<file>` in the engine's environment, every call the engine makes (check, diff,
 * create, update, delete) appends one JSON line `{ op, name, start_ms, end_ms, ok }` to the file
 * (epoch milliseconds; name: the URN's last part). Unset: the provider's calls are not wrapped.
 */
import { appendFileSync } from "fs";

/** The traced form of `fn` (an async call taking the URN at `urnAt`), or `fn` itself when tracing is off. */
export function traced<A extends unknown[], R>(op: string, urnAt: number, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  const file = process.env["LAB_PROVIDER_TRACE"];
  if (!file) return fn;
  return async (...args: A) => {
    const name = String(args[urnAt]).split("::").pop();
    const start = Date.now();
    let ok = false;
    try {
      const r = await fn(...args);
      ok = true;
      return r;
    } finally {
      appendFileSync(file, JSON.stringify({ op, name, start_ms: start, end_ms: Date.now(), ok }) + "\n");
    }
  };
}
