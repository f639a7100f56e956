/**
 * Args where users have Outputs (controlPlaneEndpoint, kubelet flag values, install commands, SSH
 * fields): accepted, rendered into the steps once known and validated then; Outputs where the plan needs
 * plain values are refused naming the field. Bad args reach every language as InputPropertiesError with
 * a property path.
 */
import * as pulumi from "@pulumi/pulumi";
import { installMocks, plain, registrations, scriptOf, settled, valueOf } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";
import type { ClusterArgs } from "../../../components";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  ({ Cluster } = await import("../../../components"));
});

/** The error `new Cluster` throws, with its property errors. */
function thrown(args: ClusterArgs): { message: string; input: boolean; errors: unknown } {
  try {
    new Cluster("c", args);
  } catch (e) {
    const err = e as pulumi.InputPropertiesError;
    return { message: err.message, input: pulumi.InputPropertiesError.isInstance(err), errors: err.errors };
  }
  throw new Error("no error");
}

/** Build a cluster, wait for its registrations, and return the Commands it registered (plain inputs). */
async function commandsOf(name: string, args: ClusterArgs): Promise<{ plan: string[]; inputs: Map<string, Record<string, unknown>> }> {
  const from = registrations.length;
  const c = new Cluster(name, args);
  const plan = await valueOf(c.plan);
  await valueOf(c.nodes);
  await settled();
  const inputs = new Map(
    registrations.slice(from).filter((r) => r.type === "command:remote:Command").map((r) => [r.name, plain(r.inputs) as Record<string, unknown>]),
  );
  return { plan, inputs };
}

describe("bad args are InputPropertiesError with the path of the field", () => {
  test.each([
    ["a node's criSocket", (a: ClusterArgs) => ((a.nodes[1] as { criSocket?: string }).criSocket = "run/x.sock"), "nodes[1].criSocket", 'node "cp2": criSocket: '],
    ["a kubelet flag of the fourth node", (a: ClusterArgs) => (a.nodes[3]!.kubeletExtraArgs = [{ name: "node-ip", value: "1.2.3.4 --x" }]), "nodes[3].kubeletExtraArgs[0].value", 'node "w1": kubeletExtraArgs[0].value: '],
    ["a cluster-wide gate", (a: ClusterArgs) => (a.featureGates = { NodeLocalCriSocket: true }), "featureGates.NodeLocalCriSocket", "featureGates.NodeLocalCriSocket: "],
    ["a duplicate name (the later entry)", (a: ClusterArgs) => (a.nodes[4] = node("w1", "worker", 9)), "nodes[4].name", 'node "w1": name: duplicate node name'],
    ["a role given as an Output", (a: ClusterArgs) => (a.nodes[2]!.role = pulumi.output("control-plane") as never), "nodes[2].role", 'node "cp3": role: is an Output'],
    ["a label value given as an Output", (a: ClusterArgs) => (a.nodes[3]!.labels = { tier: pulumi.output("web") as never }), "nodes[3].labels", 'node "w1": labels: is an Output'],
    ["a kubeletConfiguration value given as an Output", (a: ClusterArgs) => (a.kubeletConfiguration = { maxPods: pulumi.output(200) }), "kubeletConfiguration", "kubeletConfiguration: is an Output"],
    ["nodes given as one Output", (a: ClusterArgs) => (a.nodes = pulumi.output(a.nodes) as never), "nodes", "nodes: is one Output as a whole"],
  ])("%s", (_, change, path, start) => {
    const args = clusterArgs();
    change(args);
    const e = thrown(args);
    expect(e.input).toBe(true);
    expect(e.message.startsWith(start)).toBe(true);
    expect(e.errors).toEqual([{ propertyPath: path, reason: expect.any(String) }]);
    const reason = (e.errors as Array<{ reason: string }>)[0]!.reason;
    expect(reason.length).toBeGreaterThan(5);
    expect(e.message.endsWith(`: ${reason}`)).toBe(true);
  });
});

test("controlPlaneEndpoint, a kubelet flag value, an install command and an SSH port as Outputs reach the nodes' configurations and scripts, no placeholder anywhere", async () => {
  const args = clusterArgs({
    kubernetesVersion: "v1.34.2",
    controlPlaneEndpoint: pulumi.output("lb-1234.elb.example.com:6443"),
    kubeadmInstallCommand: pulumi.output("apt-get install -y kubeadm={version}-1.1"),
  });
  args.nodes[3] = { ...args.nodes[3]!, port: pulumi.output(2222), kubeletExtraArgs: [{ name: "node-ip", value: pulumi.output("10.1.2.3") }] };
  const { plan, inputs } = await commandsOf("c", args);
  expect(plan[0]).not.toMatch(/^refused/);
  const init = inputs.get("c-cp1-init") as Record<string, unknown>;
  expect(String(init.stdin)).toContain("controlPlaneEndpoint: lb-1234.elb.example.com:6443");
  const join = inputs.get("c-w1-join") as Record<string, unknown>;
  expect(String(join.stdin)).toMatch(/- name: node-ip\n\s+value: 10\.1\.2\.3/);
  expect(join.connection).toEqual(expect.objectContaining({ host: "10.0.0.4", port: 2222 }));
  expect(scriptOf(String(inputs.get("c-w2-upgrade")?.create))).toContain("apt-get install -y kubeadm=1.34.2-1.1");
  const everything = JSON.stringify([...inputs.values()]);
  expect(everything).not.toContain("pending.invalid");
  expect(everything).not.toMatch(/value: pending\b/);
});

test("an Output value that is bad once known refuses the plan before any step is registered", async () => {
  const { plan, inputs } = await commandsOf("bad", clusterArgs({ controlPlaneEndpoint: pulumi.output("LB.Example.com:6443") }));
  expect(plan).toEqual([expect.stringMatching(/^refused: controlPlaneEndpoint: "LB\.Example\.com:6443" is not host or host:port/)]);
  expect([...inputs.keys()].filter((n) => !["bad-init-node", "bad-members", "bad-plan-refused"].includes(n))).toEqual([]);
});
