/**
 * The e2e tests' ahead-of-time transpilation of the lab CLI (labBuild.ts), on a small repository of its
 * own in a temporary folder: what is built and copied, that the built CLI runs under plain node (a
 * dynamic `import()` of a TypeScript module and a JSON import included), that stack traces name the
 * TypeScript sources under `--enable-source-maps`, and that it is rebuilt exactly when an input changed
 * (a source, a copied file, tsconfig.json; an edit that keeps the size and the modification time too).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { buildInputs, labCliBuild } from "./labBuild";

let root: string;

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "lab-build-"));
  // tsconfig.json may hold comments, as tsc allows.
  write("tsconfig.json", '{\n  // as tsc reads it\n  "compilerOptions": { "target": "ES2022", "module": "commonjs", "esModuleInterop": true, "resolveJsonModule": true }\n}\n');
  write("index.ts", "export {};\n");
  write("program.ts", 'import { greeting } from "./components/greet";\nexport const program = (): string => greeting("lab");\n');
  write("components/greet.ts", 'import { readFileSync } from "fs";\nimport { join } from "path";\nexport const greeting = (who: string): string => `${readFileSync(join(__dirname, "scripts", "lib.sh"), "utf8").trim()} ${who}`;\n');
  write("components/scripts/lib.sh", "hello\n");
  write("components/greet.test.ts", "this is not TypeScript that transpiles {\n");
  write("test/lab/cli.ts", 'import data from "./data.json";\nasync function main(): Promise<void> {\n  const { program } = await import("../../program");\n  const { tag } = require("./tag.cjs");\n  process.stdout.write(`${program()} ${tag} ${data.n}\\n`);\n  if (process.argv[2] === "stack") process.stdout.write(new Error("here").stack ?? "");\n}\nvoid main();\n');
  write("test/lab/tag.cjs", 'module.exports = { tag: "from cjs" };\n');
  write("test/lab/data.json", '{ "n": 1 }\n');
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

test("the sources and the files read beside them are the inputs; tests are not", () => {
  expect(buildInputs(root)).toEqual(["components/greet.ts", "components/scripts/lib.sh", "index.ts", "program.ts", "test/lab/cli.ts", "test/lab/data.json", "test/lab/tag.cjs"]);
});

test("the built CLI runs under plain node, its dynamic import a require, the copied files beside it", () => {
  const cli = labCliBuild(root, "w1");
  expect(cli).toBe(path.join(root, ".lab-build", "w1", "test", "lab", "cli.js"));
  expect(fs.readFileSync(cli, "utf8")).not.toMatch(/\bimport\(/);
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hello lab from cjs 1\n");
  expect(fs.existsSync(path.join(root, ".lab-build", "w1", "components", "greet.test.js"))).toBe(false);
});

test("with --enable-source-maps a stack trace names the TypeScript source and its line", () => {
  const cli = labCliBuild(root, "w1");
  const out = execFileSync(process.execPath, ["--enable-source-maps", cli, "stack"], { encoding: "utf8" });
  expect(out).toContain(`${path.join(root, "test", "lab", "cli.ts")}:6:`);
});

test("rebuilt when a source changed, not otherwise", () => {
  const cli = labCliBuild(root, "w1");
  const built = path.join(root, ".lab-build", "w1", "components", "greet.js");
  const before = fs.statSync(built).mtimeMs;
  labCliBuild(root, "w1");
  expect(fs.statSync(built).mtimeMs).toBe(before);
  write("components/scripts/lib.sh", "hi again\n");
  labCliBuild(root, "w1");
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hi again lab from cjs 1\n");
  write("program.ts", 'import { greeting } from "./components/greet";\nexport const program = (): string => greeting("changed");\n');
  labCliBuild(root, "w1");
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hi again changed from cjs 1\n");
  // The same size and modification time, another content (a copy that keeps times, `cp -p`).
  const data = path.join(root, "test", "lab", "data.json");
  const { mtime } = fs.statSync(data);
  fs.writeFileSync(data, '{ "n": 2 }\n');
  fs.utimesSync(data, mtime, mtime);
  labCliBuild(root, "w1");
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hi again changed from cjs 2\n");
});

test("rebuilt when tsconfig.json changed", () => {
  labCliBuild(root, "w1");
  const built = path.join(root, ".lab-build", "w1", "program.js");
  fs.writeFileSync(built, "stale");
  labCliBuild(root, "w1");
  expect(fs.readFileSync(built, "utf8")).toBe("stale");
  write("tsconfig.json", JSON.stringify({ compilerOptions: { target: "ES2019", module: "commonjs", esModuleInterop: true, resolveJsonModule: true } }));
  labCliBuild(root, "w1");
  expect(fs.readFileSync(built, "utf8")).toContain("greeting");
});
