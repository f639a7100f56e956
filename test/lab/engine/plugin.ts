/**
 * Installs the lab's stand-in command provider (test/lab/provider/) into a PULUMI_HOME with the real
 * CLI's `pulumi plugin install resource command <version> --file <folder>`, so the real engine loads it
 * as the `command` plugin that @pulumi/command asks for. The folder holds a launcher script that runs
 * the provider with this checkout's node_modules. Reinstalled only when the launcher changed.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { pathToFileURL } from "url";
import { REPO_ROOT, pulumiBinary } from "./paths";

/** The installed @pulumi/command version: the plugin version its SDK asks the engine for. */
export const COMMAND_VERSION: string = require("@pulumi/command/package.json").version;

function launcher(): string {
  const loader = path.join(REPO_ROOT, "node_modules", "tsx", "dist", "loader.mjs");
  const main = path.join(REPO_ROOT, "test", "lab", "provider", "main.ts");
  return [
    "#!/bin/sh",
    "# The lab's STAND-IN command provider (not pulumi-resource-command): see test/lab/provider/main.ts.",
    `exec node --import '${pathToFileURL(loader).href.replace(/'/g, "%27")}' '${main.replace(/'/g, "'\\''")}' "$@"`,
    "",
  ].join("\n");
}

/**
 * Makes sure PULUMI_HOME `home` has the stand-in as resource plugin `command` at {@link COMMAND_VERSION}.
 * @throws Error with the CLI's output when `pulumi plugin install` fails.
 */
export function installCommandPlugin(home: string): void {
  const installed = path.join(home, "plugins", `resource-command-v${COMMAND_VERSION}`, "pulumi-resource-command");
  const text = launcher();
  if (fs.existsSync(installed) && fs.readFileSync(installed, "utf8") === text) return;
  const src = path.join(home, "stand-in-command");
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
