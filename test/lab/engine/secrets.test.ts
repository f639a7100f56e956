/**
 * The lab's settings file on the REAL Pulumi CLI (file backend, passphrase secrets, in a temporary
 * folder): a secret is encrypted by `pulumi config set --secret` once, carried over while its value and
 * the stack's salt stay, set again when either changes, and always decrypts to the value given.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { pulumiBinary } from "./paths";
import { CliCall, writeSettings } from "./secrets";

jest.setTimeout(120_000);

const root = fs.mkdtempSync(path.join(os.tmpdir(), "lab-secrets-"));
const project = path.join(root, "project");
const log = path.join(root, "calls.log");
const env = {
  ...process.env,
  PULUMI_HOME: path.join(root, "home"),
  PULUMI_BACKEND_URL: `file://${path.join(root, "state")}`,
  PULUMI_CONFIG_PASSPHRASE: "lab",
  PULUMI_SKIP_UPDATE_CHECK: "true",
  PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
};
// The CLI behind a wrapper that records each call's arguments: how many `config set` ran.
const wrapper = path.join(root, "pulumi");
const cli: CliCall = { binary: wrapper, cwd: project, env };
const file = path.join(project, "Pulumi.s.yaml");
const pulumi = (...args: string[]) => execFileSync(pulumiBinary(), args, { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] }).toString("utf8");
const calls = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter((l) => l.startsWith("config set")) : []);
const initStack = () => pulumi("stack", "init", "s", "--secrets-provider", "passphrase");
const secureOf = (key: string) => ((YAML.parse(fs.readFileSync(file, "utf8")).config ?? {})[key] as { secure: string }).secure;

beforeAll(() => {
  for (const d of [project, env.PULUMI_HOME, path.join(root, "state")]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: p\nruntime: nodejs\n");
  fs.writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(pulumiBinary())} "$@"\n`, { mode: 0o755 });
  initStack();
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test("a secret is set through the CLI once, carried over while value and salt stay, and set again when either changes", () => {
  const config = { "p:plain": "x" };
  expect(writeSettings(file, "s", config, { "p:key": "first" }, cli)).toEqual(["p:key"]);
  const firstCipher = secureOf("p:key");
  expect(firstCipher).toMatch(/^v1:/);
  expect(pulumi("config", "get", "--stack", "s", "p:key").trim()).toBe("first");

  // The same value again: no CLI call, the same ciphertext, other config rewritten from what is given.
  expect(writeSettings(file, "s", { "p:plain": "y" }, { "p:key": "first" }, cli)).toEqual([]);
  expect(calls()).toHaveLength(1);
  expect(secureOf("p:key")).toBe(firstCipher);
  expect(pulumi("config", "get", "--stack", "s", "p:key").trim()).toBe("first");
  expect(pulumi("config", "get", "--stack", "s", "p:plain").trim()).toBe("y");
  expect(fs.readFileSync(path.join(project, ".secrets.s.json"), "utf8")).not.toContain("first");

  // A changed value: set again.
  expect(writeSettings(file, "s", config, { "p:key": "second" }, cli)).toEqual(["p:key"]);
  expect(pulumi("config", "get", "--stack", "s", "p:key").trim()).toBe("second");

  // The stack removed and made again (a new salt): the old ciphertext would not decrypt; set again.
  pulumi("stack", "rm", "s", "--yes", "--force");
  initStack();
  expect(writeSettings(file, "s", config, { "p:key": "second" }, cli)).toEqual(["p:key"]);
  expect(pulumi("config", "get", "--stack", "s", "p:key").trim()).toBe("second");
  expect(calls()).toHaveLength(3);
});
