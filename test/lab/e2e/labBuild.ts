/**
 * The lab CLI (test/lab/cli.ts) and all it runs (the root program, the component, the lab's engine
 * driver) transpiled ahead of time into plain CommonJS, for the e2e tests' one-process-per-operation
 * runs. It is the transpilation tsx does on the fly (esbuild, one file at a time, nothing bundled,
 * the repository's tsconfig), done once per test file instead of once per `pulumi` operation: node then
 * starts the lab CLI without tsx's resolver, transform cache and source maps, about 0.5 s less per
 * operation on an idle 2-core machine (2.6 s against 2.1 s for a no-change preview of a 5-node stack).
 *
 * Output: `<repo>/.lab-build/<worker>/`, the repository's layout (`components/...`, `program.js`,
 * `test/lab/...`) with the files the code reads beside itself (components/scripts/lib.sh, the lab's
 * `.cjs` files) copied. The folder has no Pulumi.yaml, so REPO_ROOT (test/lab/nodes/paths.ts) is still
 * the repository. Rebuilt when the set of sources, or any source's size or modification time, changed.
 * Inline source maps, used only under `node --enable-source-maps`.
 */
import * as fs from "fs";
import * as path from "path";
import { transformSync } from "esbuild";

/** The folders and files transpiled, relative to the repository (test files left out). */
const SOURCES = ["components", "test/lab", "program.ts", "index.ts"];
/** Files other than TypeScript that the code reads from its own folder. */
const COPIED = /(^components\/scripts\/lib\.sh$|\.cjs$)/;

function walk(root: string, rel: string, out: string[]): void {
  const abs = path.join(root, rel);
  if (!fs.statSync(abs).isDirectory()) {
    out.push(rel);
    return;
  }
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    walk(root, path.posix.join(rel, e.name), out);
  }
}

/** The files of the build, relative to the repository: TypeScript sources and copied files. */
export function buildInputs(root: string): string[] {
  const files: string[] = [];
  for (const s of SOURCES) walk(root, s, files);
  return files.filter((f) => (f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts")) || COPIED.test(f)).sort();
}

/**
 * The built lab CLI for `root` (a checkout of this repository), building or rebuilding it first when
 * its sources changed. `key` names the output folder (one per Jest worker, so two never write one).
 * @returns the path of the built `test/lab/cli.js`.
 * @throws Error with esbuild's message when a source does not transpile.
 */
export function labCliBuild(root: string, key: string): string {
  const out = path.join(root, ".lab-build", key);
  const files = buildInputs(root);
  const stamp = JSON.stringify(files.map((f) => {
    const s = fs.statSync(path.join(root, f));
    return [f, s.size, s.mtimeMs];
  }));
  const stampFile = path.join(out, "stamp.json");
  const cli = path.join(out, "test", "lab", "cli.js");
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) return cli;
  fs.rmSync(out, { recursive: true, force: true });
  const tsconfigRaw = JSON.parse(fs.readFileSync(path.join(root, "tsconfig.json"), "utf8"));
  for (const f of files) {
    const src = path.join(root, f);
    const dst = path.join(out, f.endsWith(".ts") ? f.replace(/\.ts$/, ".js") : f);
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    if (!f.endsWith(".ts")) {
      fs.copyFileSync(src, dst);
      continue;
    }
    const { code } = transformSync(fs.readFileSync(src, "utf8"), {
      loader: "ts",
      format: "cjs",
      platform: "node",
      target: `node${process.versions.node}`,
      // `import()` of a module becomes a require, as tsx's CommonJS mode has it (no ESM resolution of `.ts`).
      supported: { "dynamic-import": false },
      sourcemap: "inline",
      sourcefile: src,
      tsconfigRaw,
    });
    fs.writeFileSync(dst, code);
  }
  fs.writeFileSync(stampFile, stamp);
  return cli;
}
