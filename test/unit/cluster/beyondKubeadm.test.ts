/**
 * Where kubeadm stops short, the component goes further (kubeadm-facts.md): with the gate in effect the
 * node ends node-local even when kubeadm 1.33-1.36 kept the flag (instance-config.yaml already existed),
 * when instance-config.yaml is stale (a runtime switch: kubeadm never rewrites it), and on 1.37 (which
 * leaves the annotation); with the gate off no instance-config.yaml is left behind. And before `kubeadm
 * upgrade` runs, a gate-in-effect node gets its instance-config.yaml, so kubeadm reads its real socket.
 */
import { installMocks, plain, registrations, scriptOf, settled, stdinData, valueOf, type FakeNodes } from "../helpers/mocks";
import { clusterArgs, CONTAINERD, CRIO } from "../helpers/fixtures";
import { flagsEnv, kubeadmFiles, kubeletConfigYaml } from "../helpers/kubeadmFiles";

let Cluster: typeof import("../../../components").Cluster;
let fake: FakeNodes;

beforeAll(async () => {
  ({ fake } = await installMocks({ nodeLocal: true }));
  ({ Cluster } = await import("../../../components"));
});
afterEach(() => {
  delete fake.files;
});

const PAUSE = "--pod-infra-container-image=registry.k8s.io/pause:3.10";
const FILES = { instance: "/var/lib/kubelet/instance-config.yaml", config: "/var/lib/kubelet/config.yaml", flags: "/var/lib/kubelet/kubeadm-flags.env" };

/** The pk-write/pk-remove lines a step got on stdin, decoded. */
function stdinOf(name: string): Array<{ op: string; path: string; expect: string; content?: string }> {
  return stdinData(registrations.find((r) => r.name === name)?.inputs.stdin)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [op = "", path = "", expect = "", , data] = l.split(" ");
      return { op, path, expect, ...(data !== undefined ? { content: Buffer.from(data, "base64").toString("utf8") } : {}) };
    });
}

async function build(version: string, gates?: Record<string, boolean>): Promise<void> {
  registrations.splice(0);
  const c = new Cluster("c", clusterArgs({ kubernetesVersion: version, ...(gates ? { featureGates: gates } : {}) }));
  await valueOf(c.nodes);
  await settled();
}

describe.each(["v1.33.2", "v1.34.1", "v1.35.0", "v1.36.0"])("%s, gate in effect", (version) => {
  test("instance-config.yaml existed, so kubeadm kept the flag: the kubelet step removes it and touches nothing else", async () => {
    fake.files = (_node, ep) => ({ ...kubeadmFiles(true, ep), [FILES.flags]: flagsEnv([`--container-runtime-endpoint=${ep}`, PAUSE, "--node-ip=10.0.0.5"]) });
    await build(version, version === "v1.33.2" ? { NodeLocalCRISocket: true } : undefined);
    expect(stdinOf("c-w2-kubelet").map(({ op, path, content }) => ({ op, path, content }))).toEqual([
      { op: "pk-write", path: FILES.flags, content: flagsEnv([PAUSE, "--node-ip=10.0.0.5"]) },
    ]);
  });
});

describe.each(["v1.34.1", "v1.37.0"])("%s: a stale instance-config.yaml (the runtime switched to CRI-O)", (version) => {
  test("is rewritten, and config.yaml with it", async () => {
    fake.files = () => kubeadmFiles(true, CONTAINERD);
    await build(version);
    expect(stdinOf("c-w2-kubelet").map(({ op, path, content }) => ({ op, path, content }))).toEqual([
      { op: "pk-write", path: FILES.instance, content: `containerRuntimeEndpoint: "${CRIO}"\n` },
      { op: "pk-write", path: FILES.config, content: kubeletConfigYaml(CRIO) },
    ]);
  });
});

test("1.37 leaves a cri-socket annotation: node-metadata removes it", async () => {
  await build("v1.37.0");
  const script = scriptOf(String(plain(registrations.find((r) => r.name === "c-w2-node-metadata")?.inputs.create)));
  // lib.sh's pk_node_metadata removes the annotation when told `yes` (nodeMetadata.test.ts runs it).
  expect(script).toMatch(/^pk_node_metadata 'w2' yes '[^']*'$/m);
});

describe.each(["v1.32.3", "v1.33.2", "v1.34.1", "v1.35.0"])("%s, gate off", (version) => {
  test("an instance-config.yaml from an earlier gate-on run goes, the flag comes back", async () => {
    // kubeadm with the gate off keeps an existing instance-config.yaml and puts no flag back.
    fake.files = (_node, ep) => ({ ...kubeadmFiles(true, ep), [FILES.flags]: flagsEnv([PAUSE]) });
    await build(version, { NodeLocalCRISocket: false });
    expect(stdinOf("c-w2-kubelet").map(({ op, path, content }) => ({ op, path, content }))).toEqual([
      { op: "pk-remove", path: FILES.instance },
      { op: "pk-write", path: FILES.flags, content: flagsEnv([`--container-runtime-endpoint=${CRIO}`, PAUSE]) },
    ]);
    expect(stdinOf("c-w2-upgrade")).toEqual([]);
  });
});

describe.each([
  ["v1.32.3", { NodeLocalCRISocket: true }],
  ["v1.33.2", { NodeLocalCRISocket: true }],
  ["v1.34.1", undefined],
  ["v1.36.0", undefined],
  ["v1.37.0", undefined],
])("%s with %j: before kubeadm upgrade", (version, gates) => {
  test("instance-config.yaml is written with the node's endpoint, whatever it held (no compare-and-swap)", async () => {
    fake.detected = { cp3: CRIO };
    try {
      await build(version, gates);
    } finally {
      delete fake.detected;
    }
    for (const [node, ep] of [["w2", CRIO], ["cp3", CRIO], ["cp1", CONTAINERD]] as const) {
      expect({ node, changes: stdinOf(`c-${node}-upgrade`) }).toEqual({
        node,
        changes: [{ op: "pk-write", path: FILES.instance, expect: "any", content: `containerRuntimeEndpoint: "${ep}"\n` }],
      });
    }
  });
});
