/**
 * The Cluster built the way the package's plugin builds it for another language (`pulumi package add`,
 * then a Python or Go program): the provider host's `construct`, with the inputs as they arrive over
 * gRPC. A Python program writes `kubernetes_version=...` and plain dicts; its SDK sends the schema's
 * property names (camelCase, as in TypeScript), whole numbers as numbers, enums as their strings, and a
 * secret or another resource's value as an output value inside the structure. The inputs go through the
 * SDK's own deserialisation (`deserializeInputs`, what the plugin host runs on the request), then
 * `ComponentProvider.construct`, under Pulumi's mock runtime.
 */
import * as pulumi from "@pulumi/pulumi";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { installMocks, isSecretInput, plain, registrations, settled, valueOf, SECRETS } from "../helpers/mocks";
import { hostKey } from "../helpers/fixtures";

const OUTPUT_VALUE = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
const SIG = "4dabf18193072939515e22adb298388d";

let provider: import("@pulumi/pulumi/provider/experimental").ComponentProvider;
let deserializeInputs: (s: Struct, deps: Map<string, unknown>) => Promise<pulumi.Inputs>;

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  const { ComponentProvider, getPulumiComponents } = await import("@pulumi/pulumi/provider/experimental");
  ({ deserializeInputs } = (await import("@pulumi/pulumi/provider/server")) as unknown as { deserializeInputs: typeof deserializeInputs });
  // As the Node.js plugin host does: the components are what the plugin's entry exports, the provider's
  // name is its package.json's.
  components = getPulumiComponents(await import("../../../plugin")).map((c) => c.name);
  const name = (await import("../../../plugin/package.json")).name;
  provider = new ComponentProvider({ name, components: getPulumiComponents(await import("../../../plugin")), dirname: `${__dirname}/../../../plugin` });
});

let components: string[];
test("the plugin's entry exports exactly one component, the Cluster", () => {
  expect(components).toEqual(["Cluster"]);
});

/** What a Python program's inputs look like on the wire (a Struct), deserialised as the plugin host does. */
function fromPython(inputs: Record<string, unknown>): Promise<pulumi.Inputs> {
  return deserializeInputs(Struct.fromJavaScript(inputs as never), new Map());
}

/** A Python program's `cluster_args`, as its SDK sends them. */
function pythonArgs(): Record<string, unknown> {
  return {
    kubernetesVersion: "v1.34.2",
    kubeletSettleSeconds: 0,
    kubernetesProvider: false,
    // ssh=kubeadm.SshDefaultsArgs(private_key=config.require_secret("sshPrivateKey")): a secret output value.
    ssh: { privateKey: { [SIG]: OUTPUT_VALUE, value: SECRETS.privateKey, secret: true } },
    nodes: [
      { name: "cp1", role: "control-plane", host: "10.0.0.1", hostKey: hostKey(1), criSocket: "unix:///run/containerd/containerd.sock" },
      {
        name: "w1",
        role: "worker",
        // host=vm.private_ip: another resource's output, known here.
        host: { [SIG]: OUTPUT_VALUE, value: "10.0.0.2", dependencies: ["urn:pulumi:test::kubeadm::aws:ec2/instance:Instance::w1"] },
        hostKey: hostKey(2),
        port: 2222,
        labels: { tier: "web" },
        taints: [{ key: "dedicated", value: "web", effect: "NoSchedule" }],
        kubeletExtraArgs: [{ name: "node-ip", value: "10.0.0.2" }],
      },
    ],
  };
}

test("construct from a Python program's inputs registers the Cluster and one Command per step, with the SSH key secret", async () => {
  const inputs = await fromPython(pythonArgs());
  const result = await provider.construct("c", "kubeadm:index:Cluster", inputs, {});
  expect(await valueOf(result.urn as pulumi.Output<string>)).toBe("urn:pulumi:test::kubeadm::kubeadm:index:Cluster::c");
  const plan = await valueOf(result.state.plan as pulumi.Output<string[]>);
  expect(plan.length).toBeGreaterThan(0);
  const nodes = await valueOf(result.state.nodes as pulumi.Output<Array<{ name: string; role: string }>>);
  expect(nodes.map((n) => `${n.name} ${n.role}`)).toEqual(["cp1 control-plane", "w1 worker"]);
  await settled();

  const mine = registrations.filter((r) => r.name === "c" || r.name.startsWith("c-"));
  expect(mine.filter((r) => r.type !== "command:remote:Command").map((r) => `${r.type} ${r.name}`)).toEqual(["kubeadm:index:Cluster c"]);
  const names = mine.filter((r) => r.type === "command:remote:Command").map((r) => r.name).sort();
  expect(names).toEqual(
    [
      "c-init-node", "c-members",
      "c-cp1-prepare", "c-cp1-init", "c-cp1-cluster-config-read", "c-cp1-cluster-config", "c-cp1-upgrade", "c-cp1-drain", "c-cp1-kubelet", "c-cp1-node-metadata",
      "c-w1-prepare", "c-w1-join-token", "c-w1-join", "c-w1-upgrade", "c-w1-kubelet", "c-w1-node-metadata",
      "c-workers_1-join-material", "c-workers_1-node-metadata",
      // The worker's rollout batch (drained and uncordoned from cp1).
      "c-batch_1-drain", "c-batch_1-uncordon",
    ].sort(),
  );
  const join = mine.find((r) => r.name === "c-w1-join") as (typeof mine)[number];
  const connection = join.inputs.connection as Record<string, unknown>;
  // The mock runtime marks the whole connection secret when a field is (secretness goes up to the input).
  expect(isSecretInput(connection.privateKey) || isSecretInput(connection)).toBe(true);
  expect(isSecretInput(join.inputs.stdin)).toBe(true);
  expect(plain(connection)).toEqual(expect.objectContaining({ host: "10.0.0.2", port: 2222, user: "root", privateKey: SECRETS.privateKey }));
  // The worker's kubeadm JoinConfiguration (secret stdin) carries its taint, flag and name as given.
  const stdin = String(plain(join.inputs.stdin));
  expect(stdin).toContain("name: w1");
  expect(stdin).toMatch(/- name: node-ip\n\s+value: 10\.0\.0\.2/);
  expect(stdin).toMatch(/key: dedicated\n\s+value: web\n\s+effect: NoSchedule|effect: NoSchedule\n\s+key: dedicated/);
});

test("bad args from a Python program come back as property errors on the path of the field", async () => {
  const args = pythonArgs();
  (args.nodes as Array<Record<string, unknown>>)[1]!.criSocket = "containerd";
  const inputs = await fromPython(args);
  const e = await provider.construct("bad", "kubeadm:index:Cluster", inputs, {}).then(
    () => undefined,
    (err: unknown) => err as pulumi.InputPropertiesError,
  );
  expect(pulumi.InputPropertiesError.isInstance(e)).toBe(true);
  expect(e?.errors).toEqual([{ propertyPath: "nodes[1].criSocket", reason: expect.stringContaining("containerd") }]);
  expect(e?.message).toMatch(/^node "w1": criSocket: /);
});
