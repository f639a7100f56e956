/** The scripts' test sandboxes are temporary: removed after each test file (they were left in /tmp, 200 a run). */
import { existsSync } from "fs";
import { removeSandboxes, sandbox } from "./bash";

test("removeSandboxes removes every sandbox made so far, and only once", () => {
  const dirs = [sandbox().dir, sandbox().dir];
  for (const d of dirs) expect(existsSync(d)).toBe(true);
  removeSandboxes();
  for (const d of dirs) expect(existsSync(d)).toBe(false);
  const later = sandbox().dir;
  removeSandboxes();
  expect(existsSync(later)).toBe(false);
});
