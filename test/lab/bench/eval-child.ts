/**
 * One program-evaluation measurement in its own process (so the peak RSS is this size's alone): the
 * real root program (program.ts) under Pulumi's MOCK runtime, not the engine, with N nodes (3
 * control-plane, the rest workers); the unit tests' mocks (test/unit/helpers/mocks.ts) answer each step
 * with what a node would print, so every `apply` in the component runs as in a real `up`, and no
 * command runs. Prints one JSON line: `{ nodes, seconds, load_s, eval_s, cpu_s, peak_rss_mb,
 * resources, commands, inputs_mb }` (cpu_s: user + system CPU of the whole process, which a busy
 * machine does not inflate as it does wall time).
 *
 * With `output-args`, the same cluster built directly (no stack config) with `controlPlaneEndpoint` given
 * as an Output, as a program that takes it from a load balancer resource does: the component then
 * renders every step once the Output is known (deferred args).
 *
 * With `--dump=FILE`, also writes the registered Commands to FILE once measured, as JSON
 * `[{ name, inputs }]` (inputs as plain values, secrets unwrapped): eval-bare.ts's `replay` registers them again.
 *
 * Usage: tsx test/lab/bench/eval-child.ts <nodes> [output-args] [--dump=FILE]
 */
import { writeFileSync } from "fs";
import type * as pulumiType from "@pulumi/pulumi";

const FAKE_HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchBenchBenchBenchBenchBenchBenchBenchBench";

/** Stack config for N nodes on private addresses (never dialled: nothing runs under the mocks). */
export function evalConfig(n: number): Record<string, string> {
  const cps = Math.min(3, n);
  const nodes = Array.from({ length: n }, (_, i) => ({
    name: i < cps ? `cp-${i + 1}` : `worker-${i - cps + 1}`,
    role: i < cps ? "control-plane" : "worker",
    host: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    hostKey: FAKE_HOST_KEY,
    criSocket: "unix:///run/containerd/containerd.sock",
  }));
  return {
    "kubeadm:kubernetesVersion": "v1.34.2",
    "kubeadm:controlPlaneEndpoint": "10.0.0.1:6443",
    "kubeadm:clusterName": "c",
    "kubeadm:kubernetesProvider": "false",
    "kubeadm:sshPrivateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nbench\n-----END OPENSSH PRIVATE KEY-----\n",
    "kubeadm:nodes": JSON.stringify(nodes),
  };
}

/** The eval cluster of `n` nodes built directly, `controlPlaneEndpoint` given as an Output. */
function withOutputArgs(pulumi: typeof pulumiType, cluster: typeof import("../../../components").Cluster, n: number): { kubeconfig: pulumiType.Output<string> } {
  const c = evalConfig(n);
  const made = new cluster(c["kubeadm:clusterName"] as string, {
    kubernetesVersion: c["kubeadm:kubernetesVersion"] as string,
    nodes: JSON.parse(c["kubeadm:nodes"] as string),
    controlPlaneEndpoint: pulumi.output(c["kubeadm:controlPlaneEndpoint"] as string),
    ssh: { privateKey: pulumi.secret(c["kubeadm:sshPrivateKey"] as string) },
    kubernetesProvider: false,
  });
  return { kubeconfig: made.kubeconfig };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  if (!Number.isInteger(n) || n < 1) throw new Error("usage: eval-child.ts <nodes> [output-args] [--dump=FILE]");
  const outputArgs = process.argv.slice(3).includes("output-args");
  const dump = process.argv.slice(3).find((a) => a.startsWith("--dump="))?.slice("--dump=".length);
  const t0 = process.hrtime.bigint();
  const pulumi: typeof pulumiType = await import("@pulumi/pulumi");
  const mocks = await import("../../unit/helpers/mocks");
  await mocks.installMocks({ nodeLocal: true }, 0);
  pulumi.runtime.setAllConfig(evalConfig(n), ["kubeadm:sshPrivateKey"]);
  // The component's code loaded first, so loading (TypeScript, the SDKs) is apart from evaluation.
  const { clusterProgram } = await import("../../../program");
  const { Cluster } = await import("../../../components");
  const t1 = process.hrtime.bigint();
  const outputs = outputArgs ? withOutputArgs(pulumi, Cluster, n) : ((await clusterProgram()) as { kubeconfig: pulumiType.Output<string> });
  const kubeconfig = await mocks.valueOf(outputs.kubeconfig);
  await mocks.settled();
  const t2 = process.hrtime.bigint();
  if (kubeconfig === undefined) throw new Error("the program's kubeconfig never resolved under the mocks");
  const regs = mocks.registrations;
  // Six steps per node at least (prepare, join-token, join, upgrade, kubelet, node-metadata).
  if (regs.length < 6 * n) throw new Error(`only ${regs.length} resources registered for ${n} nodes`);
  const commands = regs.filter((r) => r.type === "command:remote:Command");
  const line =
    JSON.stringify({
      nodes: n,
      seconds: Number(t2 - t0) / 1e9,
      load_s: Number(t1 - t0) / 1e9,
      eval_s: Number(t2 - t1) / 1e9,
      cpu_s: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
      peak_rss_mb: process.resourceUsage().maxRSS / 1024,
      resources: regs.length,
      commands: commands.length,
      // What the resources' inputs weigh (command texts, stdin) as the engine would store them.
      inputs_mb: regs.reduce((a, r) => a + JSON.stringify(mocks.plain(r.inputs)).length, 0) / 1048576,
    }) + "\n";
  if (dump !== undefined) writeFileSync(dump, JSON.stringify(commands.map((r) => ({ name: r.name, inputs: mocks.plain(r.inputs) }))));
  process.stdout.write(line);
}

/** Runs a measuring child's `main`: exit 0 when it resolves, else its error on stderr (prefixed with `name`) and exit 1. */
export function runChild(name: string, run: () => Promise<void>): void {
  run().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runChild("eval-child", main);
