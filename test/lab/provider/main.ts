/**
 * The lab's STAND-IN for the `command` resource plugin (pulumi-resource-command 1.2.1), which the Go
 * module proxy does not serve here. The real Pulumi engine loads it as the `command` plugin and calls
 * it over gRPC like the real one; it serves `command:remote:Command` only, with pulumi-command's CRUD
 * rules (remoteCommand.ts) and one OpenSSH session per command (ssh.ts, command.ts).
 *
 * Run by the plugin launcher that test/lab/engine/plugin.ts installs into the lab's PULUMI_HOME;
 * argument 1 is the engine's address.
 */
import * as provider from "@pulumi/pulumi/provider";
import { engineLogger } from "./engineLog";
import { remoteCommand } from "./remoteCommand";
import { openSshExecutor } from "./ssh";
import { traced } from "./trace";

/** The plugin version the stand-in answers for: the installed @pulumi/command's. */
export const COMMAND_PLUGIN_VERSION: string = require("@pulumi/command/package.json").version;
const TYPE = "command:remote:Command";

/** The resource's own type: the URN's type part after any parent types (`a$b$command:remote:Command`). */
function typeOf(urn: string): string {
  const qualified = urn.split("::")[2] ?? "";
  return qualified.slice(qualified.lastIndexOf("$") + 1);
}

function only<T extends unknown[], R>(fn: (urn: string, ...rest: T) => R) {
  return (urn: string, ...rest: T): R => {
    if (typeOf(urn) !== TYPE) throw new Error(`the lab's stand-in command provider serves ${TYPE} only, not ${typeOf(urn)}`);
    return fn(urn, ...rest);
  };
}

function main(args: string[]): Promise<void> {
  const address = args.find((a) => !a.startsWith("-"));
  const logFor = engineLogger(address);
  const rc = remoteCommand({ executor: openSshExecutor(), logFor });
  const impl: provider.Provider = {
    version: COMMAND_PLUGIN_VERSION,
    check: traced("check", 0, only(async (_urn: string, _olds: any, news: any) => ({ inputs: news }))),
    diff: traced("diff", 1, async (_id: string, urn: string, olds: any, news: any) => only(async () => rc.diff(olds, news))(urn)),
    create: traced("create", 0, only(async (urn: string, inputs: any) => rc.create(urn, inputs))),
    update: traced("update", 1, async (_id: string, urn: string, olds: any, news: any) => only(async () => rc.update(urn, olds, news))(urn)),
    delete: traced("delete", 1, async (_id: string, urn: string, props: any) => only(async () => rc.delete(urn, props))(urn)),
    read: async (id, urn, props) => ({ id, props }),
  };
  // The real provider exits when its engine is gone (a health check); this one when its parent (the
  // engine's process) is: the process is re-parented then.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 2000).unref();
  return provider.main(impl, args);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`stand-in command provider: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
