/**
 * One `eval` measurement, in its own process (so peak RSS is this size's alone): the real root program
 * under Pulumi's mock runtime with N nodes (3 control-plane, the rest workers), no command executed:
 * the unit tests' mocks (test/unit/helpers/mocks.ts) answer each step with plausible stdout, so every
 * `apply` in the component runs as in a real `up`. Prints one JSON line:
 * `{ nodes, seconds, load_s, eval_s, peak_rss_mb, resources, commands, inputs_mb }`.
 *
 * Usage: tsx test/lab/bench/eval-child.ts <nodes>
 */
import * as path from "path";

const FAKE_HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchBenchBenchBenchBenchBenchBenchBenchBench";

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
    "kubeadm:kubernetesVersion": "v1.33.2",
    "kubeadm:controlPlaneEndpoint": "10.0.0.1:6443",
    "kubeadm:clusterName": "c",
    "kubeadm:sshPrivateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nbench\n-----END OPENSSH PRIVATE KEY-----\n",
    "kubeadm:nodes": JSON.stringify(nodes),
  };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2]);
  if (!Number.isInteger(n) || n < 1) throw new Error("usage: eval-child.ts <nodes>");
  const t0 = process.hrtime.bigint();
  const pulumi = await import("@pulumi/pulumi");
  const mocks = await import("../../unit/helpers/mocks");
  await mocks.installMocks({ nodeLocal: false });
  pulumi.runtime.setAllConfig(evalConfig(n), ["kubeadm:sshPrivateKey"]);
  // Load the component code first, so load time (TypeScript transpiling, the SDKs) is apart from evaluation.
  await import("../../../components");
  const t1 = process.hrtime.bigint();
  const program = (await import(path.join("..", "..", "..", "index"))) as { kubeconfig: import("@pulumi/pulumi").Output<string> };
  const kubeconfig = await Promise.race([
    mocks.valueOf(program.kubeconfig),
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 600_000)),
  ]);
  await mocks.settled();
  const t2 = process.hrtime.bigint();
  if (kubeconfig === undefined) throw new Error("the program's kubeconfig never resolved under the mocks");
  const regs = mocks.registrations;
  const out = {
    nodes: n,
    seconds: Number(t2 - t0) / 1e9,
    load_s: Number(t1 - t0) / 1e9,
    eval_s: Number(t2 - t1) / 1e9,
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    resources: regs.length,
    commands: regs.filter((r) => r.type === "command:remote:Command").length,
    // What the resources' inputs weigh (command texts, stdin), as sent to the engine.
    inputs_mb: regs.reduce((a, r) => a + JSON.stringify(mocks.plain(r.inputs)).length, 0) / 1048576,
  };
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`eval-child: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    process.exit(1);
  },
);
