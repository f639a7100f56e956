/**
 * The e2e tests' ahead-of-time transpilation of the lab CLI (labBuild.ts), on a small repository of its
 * own in a temporary folder: what is built and copied, that the built CLI runs under plain node (a
 * dynamic `import()` of a TypeScript module included), and that it is rebuilt exactly when a source
 * changed.
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
  write("tsconfig.json", JSON.stringify({ compilerOptions: { target: "ES2022", module: "commonjs", esModuleInterop: true } }));
  write("index.ts", "export {};\n");
  write("program.ts", 'import { greeting } from "./components/greet";\nexport const program = (): string => greeting("lab");\n');
  write("components/greet.ts", 'import { readFileSync } from "fs";\nimport { join } from "path";\nexport const greeting = (who: string): string => `${readFileSync(join(__dirname, "scripts", "lib.sh"), "utf8").trim()} ${who}`;\n');
  write("components/scripts/lib.sh", "hello\n");
  write("components/greet.test.ts", "this is not TypeScript that transpiles {\n");
  write("test/lab/cli.ts", 'async function main(): Promise<void> {\n  const { program } = await import("../../program");\n  const { tag } = require("./tag.cjs");\n  process.stdout.write(`${program()} ${tag}\\n`);\n}\nvoid main();\n');
  write("test/lab/tag.cjs", 'module.exports = { tag: "from cjs" };\n');
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

test("the sources and the files read beside them are the inputs; tests are not", () => {
  expect(buildInputs(root)).toEqual(["components/greet.ts", "components/scripts/lib.sh", "index.ts", "program.ts", "test/lab/cli.ts", "test/lab/tag.cjs"]);
});

test("the built CLI runs under plain node, its dynamic import a require, the copied files beside it", () => {
  const cli = labCliBuild(root, "w1");
  expect(cli).toBe(path.join(root, ".lab-build", "w1", "test", "lab", "cli.js"));
  expect(fs.readFileSync(cli, "utf8")).not.toMatch(/\bimport\(/);
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hello lab from cjs\n");
  expect(fs.existsSync(path.join(root, ".lab-build", "w1", "components", "greet.test.js"))).toBe(false);
});

test("rebuilt when a source changed, not otherwise", () => {
  const cli = labCliBuild(root, "w1");
  const built = path.join(root, ".lab-build", "w1", "components", "greet.js");
  const before = fs.statSync(built).mtimeMs;
  labCliBuild(root, "w1");
  expect(fs.statSync(built).mtimeMs).toBe(before);
  write("components/scripts/lib.sh", "hi again\n");
  labCliBuild(root, "w1");
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hi again lab from cjs\n");
  write("program.ts", 'import { greeting } from "./components/greet";\nexport const program = (): string => greeting("changed");\n');
  labCliBuild(root, "w1");
  expect(execFileSync(process.execPath, [cli], { encoding: "utf8" })).toBe("hi again changed from cjs\n");
});
