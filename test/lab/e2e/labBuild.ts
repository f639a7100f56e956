/**
 * The lab CLI (test/lab/cli.ts) and all it runs (the root program, the component, the lab's engine
 * driver) transpiled ahead of time into plain CommonJS, for the e2e tests' one-process-per-operation
 * runs. It is the transpilation tsx does on the fly (esbuild, one file at a time, nothing bundled,
 * the repository's tsconfig, inline source maps), done once per change instead of once per `pulumi`
 * operation: node then starts the lab CLI without tsx's resolver and transform cache. The e2e tests run
 * it with `--enable-source-maps`, so stack traces, and the source positions the Pulumi SDK records for
 * each resource, name the TypeScript sources at their lines, as under tsx (and as a real `pulumi up`,
 * which maps them too).
 *
 * Output: `<repo>/.lab-build/<key>/`, the layout of the folders tsconfig.json compiles (`components/`,
 * `program.js`, `test/lab/...`), every other file of those folders copied beside (components/scripts/lib.sh,
 * the lab's `.cjs` files, JSON), test files left out. The folder has no Pulumi.yaml, so REPO_ROOT
 * (test/lab/nodes/paths.ts) is still the repository. Rebuilt when the sha256 over every input's path and
 * content, tsconfig.json, esbuild's and node's versions changed.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { transformSync, version as esbuildVersion } from "esbuild";

/** The folders and files transpiled or copied, relative to the repository: tsconfig.json's `include`. */
const SOURCES = ["components", "plugin", "test", "examples", "program.ts", "index.ts"];

function walk(root: string, rel: string, out: string[]): void {
  const abs = path.join(root, rel);
  if (!fs.existsSync(abs)) return;
  if (!fs.statSync(abs).isDirectory()) {
    out.push(rel);
    return;
  }
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    walk(root, path.posix.join(rel, e.name), out);
  }
}

/** Whether a file is transpiled (TypeScript, not a declaration file) rather than copied. */
const transpiled = (f: string): boolean => f.endsWith(".ts") && !f.endsWith(".d.ts");

/** The files of the build, relative to the repository: the sources and the files copied; no test file. */
export function buildInputs(root: string): string[] {
  const files: string[] = [];
  for (const s of SOURCES) walk(root, s, files);
  return files.filter((f) => !f.endsWith(".test.ts")).sort();
}

/**
 * The built lab CLI for `root` (a checkout of this repository), building or rebuilding it first when
 * its inputs changed. `key` names the output folder (one per Jest worker, so two never write one).
 * @returns the path of the built `test/lab/cli.js`.
 * @throws Error with esbuild's message when a source does not transpile.
 */
export function labCliBuild(root: string, key: string): string {
  const out = path.join(root, ".lab-build", key);
  const files = buildInputs(root);
  const tsconfigRaw = fs.readFileSync(path.join(root, "tsconfig.json"), "utf8");
  const hash = createHash("sha256").update(JSON.stringify([esbuildVersion, process.versions.node, tsconfigRaw]));
  const texts = files.map((f) => {
    const text = fs.readFileSync(path.join(root, f));
    hash.update(`\0${f}\0${text.length}\0`).update(text);
    return text;
  });
  const stamp = hash.digest("hex");
  const stampFile = path.join(out, "stamp");
  const cli = path.join(out, "test", "lab", "cli.js");
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) return cli;
  fs.rmSync(out, { recursive: true, force: true });
  files.forEach((f, i) => {
    const text = texts[i] as Buffer;
    const dst = path.join(out, transpiled(f) ? f.replace(/\.ts$/, ".js") : f);
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    if (!transpiled(f)) {
      fs.writeFileSync(dst, text);
      return;
    }
    const { code } = transformSync(text.toString("utf8"), {
      loader: "ts",
      format: "cjs",
      platform: "node",
      target: `node${process.versions.node}`,
      // `import()` of a module becomes a require, as tsx's CommonJS mode has it (no ESM resolution of `.ts`).
      supported: { "dynamic-import": false },
      sourcemap: "inline",
      sourcefile: path.join(root, f),
      tsconfigRaw,
    });
    fs.writeFileSync(dst, code);
  });
  // Last, so a build cut short is redone by the next call.
  fs.writeFileSync(stampFile, stamp);
  return cli;
}
