/**
 * Installs the lab's stand-in command provider (test/lab/provider/) into a PULUMI_HOME with the real
 * CLI's `pulumi plugin install resource command <version> --file <folder>`, so the real engine loads it
 * as the `command` plugin that @pulumi/command asks for. The folder holds a launcher script that runs
 * the provider bundled into one plain JavaScript file by esbuild (as the stand-ins on the nodes are,
 * nodes/standinBundle.ts): node starts it in about 0.1 s, where loading the TypeScript sources through
 * tsx took 0.3 s on an idle machine and more on a busy one, once per `pulumi` operation (the real plugin
 * is a Go binary). Reinstalled only when the launcher changed; the bundle is rebuilt when a source under
 * test/lab/provider/ is newer than it.
 *
 * Also installs the REAL pulumi-kubernetes provider that tools/install-pulumi.sh builds, for a stack that
 * registers the Cluster's kubernetes Provider, the same way (a launcher that runs the cached binary).
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { buildSync } from "esbuild";
import { REPO_ROOT, pulumiBinDir, pulumiBinary } from "./paths";

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

/** A launcher script: `exec <argv...> "$@"`, with a first comment line saying what it starts. */
function launcher(comment: string, argv: string[]): string {
  const quoted = argv.map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return ["#!/bin/sh", `# ${comment}`, `exec ${quoted} "$@"`, ""].join("\n");
}

/**
 * Installs a launcher as resource plugin `name` at `version` into PULUMI_HOME `home` with the real CLI's
 * `pulumi plugin install resource <name> <version> --file <folder>`; reinstalled only when the launcher
 * changed.
 * @throws Error with the CLI's output when `pulumi plugin install` fails.
 */
function installLauncher(home: string, name: string, version: string, text: string): void {
  const installed = path.join(home, "plugins", `resource-${name}-v${version}`, `pulumi-resource-${name}`);
  if (fs.existsSync(installed) && fs.readFileSync(installed, "utf8") === text) return;
  const src = path.join(home, `launcher-${name}`, "plugin");
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, `pulumi-resource-${name}`), text, { mode: 0o755 });
  try {
    execFileSync(pulumiBinary(), ["plugin", "install", "resource", name, version, "--file", src, "--reinstall", "--non-interactive"], {
      env: { ...process.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer; message: string };
    throw new Error(`pulumi plugin install of the ${name} plugin failed: ${e.stderr?.toString() || e.stdout?.toString() || e.message}`);
  }
}

/**
 * Makes sure PULUMI_HOME `home` has the stand-in as resource plugin `command` at {@link COMMAND_VERSION}.
 * @throws Error with the CLI's output when `pulumi plugin install` fails.
 */
export function installCommandPlugin(home: string): void {
  const comment = "The lab's STAND-IN command provider (not pulumi-resource-command): see test/lab/provider/main.ts.";
  installLauncher(home, "command", COMMAND_VERSION, launcher(comment, ["node", providerBundle(home)]));
}

/** The installed @pulumi/kubernetes version: the plugin version its SDK asks the engine for. */
export const KUBERNETES_VERSION: string = require("@pulumi/kubernetes/package.json").version;

/**
 * The REAL pulumi-kubernetes provider binary that tools/install-pulumi.sh builds (from the newest commit
 * the Go module proxy serves, see there), or undefined when it has not been built.
 */
export function kubernetesPluginBinary(): string | undefined {
  const bin = path.join(pulumiBinDir(), "..", "plugins", `kubernetes-v${KUBERNETES_VERSION}`, "pulumi-resource-kubernetes");
  return fs.existsSync(bin) ? path.resolve(bin) : undefined;
}

/**
 * Makes sure PULUMI_HOME `home` has the real pulumi-kubernetes provider as resource plugin `kubernetes` at
 * {@link KUBERNETES_VERSION} (a launcher that runs the cached binary, which is 300 MB: not copied into
 * every lab).
 * @throws Error naming the setup command when the provider has not been built; with the CLI's output when
 *   `pulumi plugin install` fails.
 */
export function installKubernetesPlugin(home: string): void {
  const bin = kubernetesPluginBinary();
  if (bin === undefined) {
    throw new Error("this stack registers a kubernetes Provider (kubeadm:kubernetesProvider is not false), and the pulumi-kubernetes plugin is not built: run `bash tools/install-pulumi.sh`, or set kubeadm:kubernetesProvider: false");
  }
  installLauncher(home, "kubernetes", KUBERNETES_VERSION, launcher("The real pulumi-kubernetes provider, built by tools/install-pulumi.sh.", [bin]));
}
