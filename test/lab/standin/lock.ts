/**
 * TEST DOUBLE helper (lab stand-ins, not real Kubernetes): an exclusive `flock(1)` on a lock file,
 * held by a child `flock` process for as long as `fn` runs. The kernel releases the lock when that
 * child ends, and the child ends when our end of its stdin closes, so a crashed caller never leaves
 * the lock held. Safe across processes and across the lab's nodes (they share the host's kernel).
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";

export async function withFlock<T>(lockFile: string, fn: () => Promise<T> | T): Promise<T> {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  const child = spawn("flock", ["-x", lockFile, "sh", "-c", "echo locked; read -r _ || true"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stdout.once("data", () => resolve());
    void exited.then((code) => reject(new Error(`flock ${lockFile} exited with ${code} before locking`)));
  });
  try {
    return await fn();
  } finally {
    child.stdin.end();
    await exited;
  }
}
