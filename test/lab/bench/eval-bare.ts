/**
 * The reference for `eval`: what Pulumi's SDK and mock runtime alone cost for the same number of
 * resources. A bare program registers `commands` `command:remote:Command`s, each with a connection and
 * a one-line create (no dependencies, no applies, no component), under the same mocks as
 * eval-child.ts, in its own process. Prints one JSON line `{ commands, eval_s, cpu_s, peak_rss_mb }`
 * (cpu_s: the evaluation's own, loading excluded). With `quiet`, each is constructed as the component
 * constructs its own: a `RemoteCommand` (only the properties given get Outputs; one connection Output
 * for the Commands of a node, seven a node as the component's at the bench's setting) under
 * `withoutStackTraces` (the SDK's per-promise stack traces cut to no frames).
 *
 * Usage: tsx test/lab/bench/eval-bare.ts <commands> [quiet]
 */
import type * as pulumiType from "@pulumi/pulumi";
import { runChild } from "./eval-child";
import { withoutStackTraces } from "../../../components/cluster/command";
import { RemoteCommand } from "../../../components/cluster/remoteCommand";

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  if (!Number.isInteger(n) || n < 1) throw new Error("usage: eval-bare.ts <commands> [quiet]");
  const quiet = process.argv[3] === "quiet";
  const pulumi: typeof pulumiType = await import("@pulumi/pulumi");
  const mocks = await import("../../unit/helpers/mocks");
  await mocks.installMocks({ nodeLocal: true }, 0);
  const command = await import("@pulumi/command");
  const cpu0 = process.cpuUsage();
  const t1 = process.hrtime.bigint();
  const key = pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nbench\n-----END OPENSSH PRIVATE KEY-----\n");
  let connection = { host: "", privateKey: key };
  for (let i = 0; i < n; i++) {
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
