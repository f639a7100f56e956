/**
 * Pulumi's mock runtime for component tests: records each resource registration (when it started and
 * when it resolved, as a sequence number) and answers each `command:remote:Command` with what a node
 * would print for that step. Tests name their cluster `c`, so resources are `c-<node>-<step>`. Call `installMocks` and await it BEFORE loading the component module.
 */
import * as pulumi from "@pulumi/pulumi";
import { kubeadmFiles, snapshotOf } from "./kubeadmFiles";

/** Secret test values: they must never show up in command text. */
export const SECRETS = {
  token: "abcdef.0123456789abcdef",
  certificateKey: "f".repeat(64),
  kubeconfig: "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-key-data: S3CR3T-KUBECONFIG-KEY\n",
  privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nS3CR3T-SSH-KEY\n-----END OPENSSH PRIVATE KEY-----\n",
};

export const CA_HASH = `sha256:${"a".repeat(64)}`;

/** One registration seen by the mocks. */
export interface Registration {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  /** Sequence number when newResource was called. */
  start: number;
  /** Sequence number when it resolved. */
  end: number;
}

/** How the fake nodes answer. */
export interface FakeNodes {
  /** Node name -> the socket detection finds (default containerd). */
  detected?: Record<string, string>;
  /** Whether init/join leave node-local files (default: as the test says per call). */
  nodeLocal: boolean;
  /** The ClusterConfiguration the kubeadm-config ConfigMap holds (default: a minimal one). */
  clusterConfiguration?: string;
  /**
   * Whether a node's prepare step reports it had joined a cluster before this run (`joined=yes|no`);
   * unset: the report has no such line (read as joined).
   */
  joined?: (node: string) => boolean;
  /** Override of the files kubeadm leaves: node -> files. */
  files?: (node: string, endpoint: string) => Record<string, string | undefined>;
}

export const registrations: Registration[] = [];
let seq = 0;

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/** Unwrap the mock runtime's secret wrappers (`{ [sig]: ..., value }`). */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (SECRET_SIG in o) return plain(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

/**
 * The bash script inside a command text made by `remoteCommand` (its single quoting undone), and the
 * script's arguments (the prepare step's resource name, when the text gives it).
 */
export function commandParts(commandText: string): { script: string; args: string[] } {
  const m = /bash -c '([\s\S]*)' pulumi-kubeadm(?: '([^']*)')?$/.exec(commandText);
  if (!m) throw new Error(`not a pulumi-kubeadm command: ${commandText.slice(0, 60)}`);
  return { script: (m[1] as string).split(`'\\''`).join("'"), args: m[2] !== undefined ? [m[2]] : [] };
}

/** The bash script inside a command text made by `remoteCommand` (its single quoting undone). */
export function scriptOf(commandText: string): string {
  return commandParts(commandText).script;
}

/** The data part of a step's stdin: what follows the values it shows (`stdinWithValues`), which the script never sees. */
export function stdinData(stdin: unknown): string {
  const text = String(plain(stdin) ?? "");
  const end = text.indexOf("\n---\n");
  if (end < 0) throw new Error(`not a step's stdin (no values): ${text.slice(0, 60)}`);
  return text.slice(end + 5);
}

/** Whether a mock input is a secret wrapper. */
export function isSecretInput(value: unknown): boolean {
  return value !== null && typeof value === "object" && SECRET_SIG in (value as object);
}

function answer(fake: FakeNodes, name: string, inputs: Record<string, unknown>, endpoints: Map<string, string>): string {
  const m = /^(.*)-(prepare|init|join-token|join-material|join|cluster-config-read|cluster-config|drain|upgrade|kubelet|node-metadata)$/.exec(name.replace(/^c-/, ""));
  if (!m) return "";
  const [, node, action] = m as unknown as [string, string, string];
  // A Command without a create (the component's records, a gone machine's kept steps) prints nothing.
  if (inputs.create === undefined) return "";
  const create = scriptOf(String(inputs.create));
  switch (action) {
    case "prepare": {
      const declared = /declared=('(?:[^']|'\\'')*')/.exec(create)?.[1] ?? "''";
      const ep = declared !== "''" ? declared.slice(1, -1) : fake.detected?.[node] ?? "unix:///var/run/containerd/containerd.sock";
      endpoints.set(node, ep);
      const joined = fake.joined === undefined ? "" : `joined=${fake.joined(node) ? "yes" : "no"}\n`;
      return `criSocket=${ep}\nkubeadmVersion=v1.0.0\n${joined}`;
    }
    case "cluster-config-read":
      return JSON.stringify({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "kubeadm-config", namespace: "kube-system", resourceVersion: "42" },
        data: { ClusterConfiguration: fake.clusterConfiguration ?? "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.33.2\n" },
      });
    case "upgrade": {
      // The node at the target version (the script's own target, the second word of its pk_upgrade_step call), and its kubelet files.
      const ep = endpoints.get(node) ?? "unix:///var/run/containerd/containerd.sock";
      const version = `nodeVersion=${/^pk_upgrade_step '[^']*' '([^']*)'/m.exec(create)?.[1] ?? ""}\n`;
      return version + snapshotOf(fake.files ? fake.files(node, ep) : kubeadmFiles(fake.nodeLocal, ep));
    }
    case "init":
    case "join":
    case "drain":
    case "cluster-config":
      return "";
    case "join-token":
    case "join-material":
      return `apiServerEndpoint=10.0.0.1:6443\ntoken=${SECRETS.token}\ncaCertHash=${CA_HASH}\ncertificateKey=${
        /^pk_join_material \S+ \d+ yes$/m.test(create) ? SECRETS.certificateKey : ""
      }\n`;
    case "node-metadata":
      // The first control-plane node's prints the admin kubeconfig (its fd 3, the step's stdout).
      return create.includes("cat /etc/kubernetes/admin.conf >&3") ? SECRETS.kubeconfig : "changed=0\n";
    default:
      return "changed=0\n";
  }
}

/**
 * Install the mocks. `fake` can be changed between tests through the returned object. `delayMs`
 * (default 2): how long each registration takes; the eval bench passes 0, since its plans chain
 * thousands of registrations and a fixed delay on each would measure the mock, not the program.
 */
export async function installMocks(fake: FakeNodes, delayMs = 2): Promise<{ fake: FakeNodes }> {
  const state = { fake };
  const endpoints = new Map<string, string>();
  await pulumi.runtime.setMocks(
    {
      newResource: async (args) => {
        const start = seq++;
        // A registration resolves later, as the engine's does (delayMs 0: on the next turn of the event loop).
        await new Promise((r) => (delayMs > 0 ? setTimeout(r, delayMs) : setImmediate(r)));
        const stdout = args.type === "command:remote:Command" ? answer(state.fake, args.name, plain(args.inputs) as Record<string, unknown>, endpoints) : undefined;
        const end = seq++;
        registrations.push({ type: args.type, name: args.name, inputs: args.inputs, start, end });
        // A StackReference (the root program reads its own stack) answers with no previous outputs.
        if (args.type === "pulumi:pulumi:StackReference") return { id: args.name, state: { name: args.name, outputs: {}, secretOutputNames: [] } };
        return { id: `${args.name}-id`, state: { ...args.inputs, ...(stdout !== undefined ? { stdout, stderr: "" } : {}) } };
      },
      call: (args) => args.inputs,
    },
    "kubeadm",
    "test",
    false,
    "organization",
  );
  return state;
}

/** The value of an Output, once known. */
export function valueOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply((v) => resolve(v)));
}

/**
 * Wait until every registration of the program has resolved and nothing new started for a moment: the
 * SDK's own wait (`waitForRPCs`, internal to it, what the Node.js language host awaits before a program
 * ends: every resource constructed holds it until its registration resolved), then 30 ms in which no
 * registration started, again until one passes. A quiet moment alone is not enough on a busy machine:
 * a long synchronous stretch of the program (no registration, timers late) looked quiet, and a 1000-node
 * evaluation once ended after 1013 of its 7205 resources.
 */
export async function settled(): Promise<void> {
  let last = -1;
  while (last !== seq) {
    await (pulumi.runtime as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs();
    last = seq;
    await new Promise((r) => setTimeout(r, 30));
  }
}
