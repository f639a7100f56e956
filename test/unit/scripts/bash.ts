/** Run a rendered node script for real in bash, with a temporary state dir and optional PATH stubs. */
import { spawnSync } from "child_process";
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";

export interface BashResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A temp dir with `bin/` for stubs and `state/` standing in for /var/lib/pulumi-kubeadm. */
export function sandbox(): { dir: string; bin: string; state: string; stub: (name: string, body: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), "pk-script-"));
  const bin = join(dir, "bin");
  const state = join(dir, "state");
  mkdirSync(bin);
  mkdirSync(state);
  return {
    dir,
    bin,
    state,
    stub: (name, body) => {
      const p = join(bin, name);
      writeFileSync(p, `#!/bin/bash\n${body}\n`);
      chmodSync(p, 0o755);
    },
  };
}

/** Run `script` with bash; PK_STATE_DIR is pointed at `state` and `bin` is put first on PATH. */
export function runBash(script: string, opts: { stdin?: string; bin?: string; state?: string; wrap?: string[] } = {}): BashResult {
  let text = script;
  if (opts.state) text = text.replace(/^PK_STATE_DIR=.*$/m, `PK_STATE_DIR=${opts.state}`);
  const env = { ...process.env, PATH: `${opts.bin ? `${opts.bin}:` : ""}${process.env.PATH}` };
  const [cmd, ...args] = [...(opts.wrap ?? []), "bash", "-c", text, "test"];
  const r = spawnSync(cmd as string, args, { input: opts.stdin ?? "", env, encoding: "utf8", timeout: 30000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
