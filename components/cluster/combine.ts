/**
 * Values that may be Outputs, combined with as few Outputs as they need. Every Output costs Pulumi's
 * Node.js SDK about ten promises and a walk of its value (`containsUnknowns`), kept until the program
 * ends; `pulumi.all` first copies each Output it is given into two more. At 1000 nodes the component's
 * own Outputs were most of the program's evaluation time and memory.
 */
import * as pulumi from "@pulumi/pulumi";
import { isDeferred } from "./deferred";

/** The value of `X`: an Output's or a Promise's, or `X` itself. */
type Plain<X> = X extends pulumi.OutputInstance<infer U> ? U : X extends Promise<infer U> ? U : X;

/** The value of each element of `T`. */
export type Values<T extends readonly unknown[]> = { [K in keyof T]: Plain<T[K]> };

/**
 * `f` of the values, each given plain or as an Output, as `pulumi.all(values).apply(f)` gives it (the
 * same value, resources, secrecy, and unknown at preview when any value is), with fewer Outputs: none
 * when every value is plain (`f`'s result itself, computed now: an error `f` throws is thrown here), the
 * one Output's own `apply` when one is, `pulumi.all(...).apply` when more are. A Promise counts as an
 * Output. An Output `f` returns is lifted, as `apply` does (and given as it is when every value is plain).
 */
export function combine<T extends readonly unknown[], R>(values: readonly [...T], f: (v: Values<T>) => R): Plain<R> | pulumi.Output<Plain<R>> {
  const deferred = values.filter(isDeferred);
  if (deferred.length === 0) return f(values as unknown as Values<T>) as Plain<R> | pulumi.Output<Plain<R>>;
  const only = deferred[0];
  if (deferred.length === 1 && pulumi.Output.isInstance(only)) {
    const at = values.indexOf(only);
    return (only as pulumi.Output<unknown>).apply((v) => f(values.map((x, i) => (i === at ? v : x)) as unknown as Values<T>)) as pulumi.Output<Plain<R>>;
  }
  return pulumi.all(values as unknown as unknown[]).apply((v) => f(v as unknown as Values<T>)) as pulumi.Output<Plain<R>>;
}
