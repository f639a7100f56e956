/** Test helper: the error `fn` throws (fails the test when it throws nothing). */
export function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a throw, got none");
}
