/**
 * The reference for `eval`: what Pulumi's SDK and mock runtime alone cost for the same number of
 * resources. A bare program registers `commands` `command:remote:Command`s, each with a connection and
 * a one-line create (no dependencies, no applies, no component), under the same mocks as
 * eval-child.ts, in its own process. Prints one JSON line `{ commands, eval_s, cpu_s, peak_rss_mb }`
 * (cpu_s: the evaluation's own, loading excluded). With `quiet`, each is constructed as the component
 * constructs its own: a `RemoteCommand` (only the properties given get Outputs; one connection Output
 * for the Commands of a node, seven a node as the component's at the bench's setting) under
 * `withoutStackTraces` (the SDK's per-promise stack traces cut to no frames). With `replay FILE`, the
 * component's own Commands as eval-child.ts `--dump` wrote them (`<commands>` is then their number): the
 * same names and inputs, each a plain value known up front (no Outputs, no dependencies), constructed as
 * with `quiet`, one connection object for all the Commands with the same connection (the file is read
 * before the clock starts; its parsed text counts in the peak RSS, as the component's texts do in its own).
 *
 * Usage: tsx test/lab/bench/eval-bare.ts <commands> [quiet | replay FILE]
 */
import { readFileSync } from "fs";
import type * as pulumiType from "@pulumi/pulumi";
import { runChild } from "./eval-child";
import { withoutStackTraces } from "../../../components/cluster/command";
import { REMOTE_COMMAND_INPUTS, RemoteCommand, RemoteCommandArgs } from "../../../components/cluster/remoteCommand";

/** A Command as eval-child.ts `--dump` writes it. */
interface Dumped {
  name: string;
  inputs: Record<string, unknown>;
}

/** Registers `dumped` again, inputs as plain values, each connection's `privateKey` the secret `key`. */
function replay(key: pulumiType.Output<string>, dumped: Dumped[]): void {
  const connections = new Map<string, RemoteCommandArgs["connection"]>();
  for (const d of dumped) {
    const text = JSON.stringify(d.inputs.connection);
    let connection = connections.get(text);
    if (connection === undefined) {
      connection = { ...(d.inputs.connection as { host: string }), privateKey: key };
      connections.set(text, connection);
    }
    const args: Record<string, unknown> = { connection };
    for (const k of REMOTE_COMMAND_INPUTS) if (k !== "connection" && d.inputs[k] !== undefined) args[k] = d.inputs[k];
    withoutStackTraces(() => new RemoteCommand(d.name, args as unknown as RemoteCommandArgs));
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  if (!Number.isInteger(n) || n < 1) throw new Error("usage: eval-bare.ts <commands> [quiet | replay FILE]");
  const quiet = process.argv[3] === "quiet";
  const dumped = process.argv[3] === "replay" ? (JSON.parse(readFileSync(process.argv[4] ?? "", "utf8")) as Dumped[]) : undefined;
  if (dumped !== undefined && dumped.length !== n) throw new Error(`replay: ${process.argv[4]} holds ${dumped.length} Commands, not ${n}`);
  const pulumi: typeof pulumiType = await import("@pulumi/pulumi");
  const mocks = await import("../../unit/helpers/mocks");
  await mocks.installMocks({ nodeLocal: true }, 0);
  const command = await import("@pulumi/command");
  const cpu0 = process.cpuUsage();
  const t1 = process.hrtime.bigint();
  const key = pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nbench\n-----END OPENSSH PRIVATE KEY-----\n");
  let connection = { host: "", privateKey: key };
  if (dumped !== undefined) replay(key, dumped);
  else for (let i = 0; i < n; i++) {
    if (quiet) {
      // A node's seven Commands share its connection object, as the component's steps do.
      if (i % 7 === 0) connection = { host: `10.0.${(i >> 8) & 255}.${i & 255}`, privateKey: key };
      const shared = connection;
      withoutStackTraces(() => new RemoteCommand(`bare-${i}`, { connection: shared, create: "true" }));
    } else {
      new command.remote.Command(`bare-${i}`, { connection: { host: `10.0.${(i >> 8) & 255}.${i & 255}`, privateKey: key }, create: "true" });
    }
  }
  await mocks.settled();
  const t2 = process.hrtime.bigint();
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    JSON.stringify({ commands: n, eval_s: Number(t2 - t1) / 1e9, cpu_s: (cpu.user + cpu.system) / 1e6, peak_rss_mb: process.resourceUsage().maxRSS / 1024 }) + "\n",
  );
}

if (require.main === module) runChild("eval-bare", main);
