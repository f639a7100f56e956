/**
 * README's TypeScript samples type-check as written against this package (`pulumi-kubeadm` resolved
 * to components/index.ts), so a sample that uses a name it never defines, or an argument the Cluster
 * does not take, fails here.
 */
import * as fs from "fs";
import * as path from "path";
import ts from "typescript";

const REPO = path.resolve(__dirname, "..", "..", "..");

function samples(): string[] {
  const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

test("README has TypeScript samples, and each one type-checks", () => {
  const found = samples();
  expect(found.length).toBeGreaterThan(0);
  const dir = fs.mkdtempSync(path.join(REPO, "test", "unit", "readme", ".tmp-"));
  try {
    const files = found.map((text, i) => {
      const file = path.join(dir, `sample${i}.ts`);
      fs.writeFileSync(file, text.replace(/from "pulumi-kubeadm"/g, `from ${JSON.stringify(path.join(REPO, "components"))}`));
      return file;
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      skipLibCheck: true,
      types: ["node"],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file ? path.basename(d.file.fileName) : "-"}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(problems).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
