/**
 * The package as npm users get it: `npm pack`, the tarball installed into a scratch program outside the
 * repository, and that program loaded the way Pulumi runs a TypeScript program (@pulumi/pulumi's own
 * ts-node registration, which does not compile files under node_modules), building a Cluster under
 * Pulumi's mock runtime.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const REPO = path.resolve(__dirname, "..", "..");
jest.setTimeout(900_000); // a guard against a hang, sized for a busy 2-core machine

let scratch: string;
let tarball: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pk-pack-"));
  const out = execFileSync("npm", ["pack", "--pack-destination", scratch, "--json"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const jsonStart = out.indexOf("[");
  tarball = path.join(scratch, (JSON.parse(out.slice(jsonStart)) as Array<{ filename: string }>)[0]!.filename);
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

test("the tarball holds the compiled package, its shell library and LICENSE, and no tests or sources", () => {
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, ""));
  expect(files).toEqual(expect.arrayContaining(["package.json", "LICENSE", "README.md", "dist/components/index.js", "dist/components/index.d.ts", "dist/components/scripts/lib.sh"]));
  expect(files.filter((f) => /^test\/|^\.ci\/|^tools\/|\.ts$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);
});

/** The tarball installed into a scratch program outside the repository (once): its folder. */
let appDir: string | undefined;
function installedApp(): string {
  if (appDir !== undefined) return appDir;
  const app = path.join(scratch, "app");
  fs.mkdirSync(app);
  const pulumiVersion = require("@pulumi/pulumi/package.json").version as string;
  fs.writeFileSync(
    path.join(app, "package.json"),
    JSON.stringify({ name: "scratch", private: true, dependencies: { "@pulumi/pulumi": pulumiVersion, "pulumi-kubeadm": `file:${tarball}` } }),
  );
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: app, stdio: "pipe" });
  appDir = app;
  return app;
}

/**
 * Writes `lines` as `file` of the scratch program and runs it as @pulumi/pulumi's run.js runs a
 * TypeScript program (its ts-node, project options skipped); its stdout.
 */
function runProgram(file: string, lines: string[]): string {
  const app = installedApp();
  fs.writeFileSync(path.join(app, file), lines.join("\n"));
  const runner = [
    "const ts = require('@pulumi/pulumi/tsutils');",
    "const { tsnodeRequire, typescriptRequire } = ts.typeScriptRequireStrings();",
    "require(tsnodeRequire).register({ compiler: typescriptRequire, transpileOnly: true, skipProject: true, compilerOptions: {} });",
    `require('./${file}');`,
  ].join("\n");
  return execFileSync(process.execPath, ["-e", runner], { cwd: app, encoding: "utf8" });
}

test("installed into a program outside the repository, it loads through Pulumi's TypeScript loader and builds a Cluster under mocks", () => {
  const out = runProgram("index.ts", [
    'import * as pulumi from "@pulumi/pulumi";',
    "const registered: string[] = [];",
    "const cm = JSON.stringify({ metadata: { name: 'kubeadm-config', namespace: 'kube-system', resourceVersion: '1' }, data: { ClusterConfiguration: 'apiVersion: kubeadm.k8s.io/v1beta4\\nkind: ClusterConfiguration\\n' } });",
    "const answer = (name: string) => name.endsWith('-prepare') ? 'criSocket=unix:///run/containerd/containerd.sock' : name.endsWith('-cluster-config-read') ? cm : '';",
    "pulumi.runtime.setMocks({",
    "  newResource: (a: any) => { registered.push(a.type + ' ' + a.name); return { id: a.name + '-id', state: { ...a.inputs, stdout: answer(a.name), stderr: '' } }; },",
    "  call: (a: any) => a.inputs,",
    "}, 'scratch', 'dev', true);",
    'import { Cluster } from "pulumi-kubeadm";',
    'const cluster = new Cluster("demo", {',
    '  kubernetesVersion: "v1.34.2",',
    '  nodes: [{ name: "cp-1", role: "control-plane", host: "10.0.0.1", hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl", criSocket: "unix:///run/containerd/containerd.sock" }],',
    "});",
    "let plan: string[] = [];",
    "cluster.plan.apply((p) => { plan = p; });",
    "process.once('beforeExit', () => console.log(JSON.stringify({ plan, registered: registered.length })));",
  ]);
  const result = JSON.parse(out.trim().split("\n").pop()!) as { plan: string[]; registered: number };
  // A new cluster (the component's record is still to be created): the plan names its kubeadm init.
  expect(result.plan).toEqual([expect.stringMatching(/^node "cp-1" \(control-plane\): kubeadm init v1\.34\.2 /)]);
  expect(result.registered).toBeGreaterThan(5);
});

test("an error raised inside the package names files the package ships (no source maps to sources it leaves out)", () => {
  const out = runProgram("refused.ts", [
    'import * as pulumi from "@pulumi/pulumi";',
    "pulumi.runtime.setMocks({ newResource: (a: any) => ({ id: a.name + '-id', state: a.inputs }), call: (a: any) => a.inputs }, 'scratch', 'dev', true);",
    'import { Cluster } from "pulumi-kubeadm";',
    "try {",
    '  new Cluster("demo", { kubernetesVersion: "v1.34.2", nodes: [] });',
    "} catch (e) {",
    "  console.log(JSON.stringify({ stack: (e as Error).stack }));",
    "}",
  ]);
  const { stack } = JSON.parse(out.trim().split("\n").pop()!) as { stack: string };
  // Every frame inside the package, as the loader's source-map support prints it (a path, :line:column).
  const frames = [...stack.matchAll(/(\/[^\s():]*\/node_modules\/pulumi-kubeadm\/[^\s():]+):\d+:\d+/g)].map((m) => m[1] as string);
  expect(frames.length).toBeGreaterThan(0);
  expect(frames.filter((f) => !fs.existsSync(f))).toEqual([]);
});
