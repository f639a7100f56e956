/**
 * Installs the lab's stand-in command provider (test/lab/provider/) into a PULUMI_HOME with the real
 * CLI's `pulumi plugin install resource command <version> --file <folder>`, so the real engine loads it
 * as the `command` plugin that @pulumi/command asks for. The folder holds a launcher script that runs
 * the provider bundled into one plain JavaScript file by esbuild (as the stand-ins on the nodes are,
 * nodes/standinBundle.ts): node starts it in about 0.1 s, where loading the TypeScript sources through
 * tsx took 0.3 s on an idle machine and more on a busy one, once per `pulumi` operation (the real plugin
 * is a Go binary). Reinstalled only when the launcher changed; the bundle is rebuilt when a source under
 * test/lab/provider/ is newer than it.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { buildSync } from "esbuild";
import { REPO_ROOT, pulumiBinary } from "./paths";

/** The installed @pulumi/command version: the plugin version its SDK asks the engine for. */
export const COMMAND_VERSION: string = require("@pulumi/command/package.json").version;

const PROVIDER_SOURCES = path.join(REPO_ROOT, "test", "lab", "provider");

/** The newest modification time (ms) of the provider's sources and of the SDK it bundles. */
function sourcesTime(): number {
  const files = fs.readdirSync(PROVIDER_SOURCES).map((f) => path.join(PROVIDER_SOURCES, f));
  files.push(path.join(REPO_ROOT, "node_modules", "@pulumi", "pulumi", "package.json"));
  return Math.max(...files.map((f) => fs.statSync(f).mtimeMs));
}

/**
 * `<home>/stand-in-command/provider.js`, built from test/lab/provider/main.ts when missing or older than
 * its sources; replaced by a rename, so an engine starting the plugin meanwhile reads a whole file.
 * @throws Error with esbuild's messages when the provider does not build.
 */
function providerBundle(home: string): string {
  const out = path.join(home, "stand-in-command", "provider.js");
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= sourcesTime()) return out;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  buildSync({
    entryPoints: [path.join(PROVIDER_SOURCES, "main.ts")],
    absWorkingDir: REPO_ROOT,
    outfile: tmp,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: `node${process.versions.node.split(".")[0]}`,
    logLevel: "silent",
  });
  fs.renameSync(tmp, out);
  return out;
}

function launcher(bundle: string): string {
  return [
    "#!/bin/sh",
    "# The lab's STAND-IN command provider (not pulumi-resource-command): see test/lab/provider/main.ts.",
    `exec node '${bundle.replace(/'/g, "'\\''")}' "$@"`,
    "",
  ].join("\n");
}

/**
 * Makes sure PULUMI_HOME `home` has the stand-in as resource plugin `command` at {@link COMMAND_VERSION}.
 * @throws Error with the CLI's output when `pulumi plugin install` fails.
 */
export function installCommandPlugin(home: string): void {
  const installed = path.join(home, "plugins", `resource-command-v${COMMAND_VERSION}`, "pulumi-resource-command");
  const text = launcher(providerBundle(home));
  if (fs.existsSync(installed) && fs.readFileSync(installed, "utf8") === text) return;
  const src = path.join(home, "stand-in-command", "plugin");
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, "pulumi-resource-command"), text, { mode: 0o755 });
  try {
    execFileSync(pulumiBinary(), ["plugin", "install", "resource", "command", COMMAND_VERSION, "--file", src, "--reinstall", "--non-interactive"], {
      env: { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer; message: string };
    throw new Error(`pulumi plugin install of the stand-in command provider failed: ${e.stderr?.toString() || e.stdout?.toString() || e.message}`);
  }
}
