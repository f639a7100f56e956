/**
 * What the component makes kubeadm see and what it writes on each node, for every supported minor with
 * the gate unset, on and off: the kubeadm config (init stdin), and the kubelet step's file changes computed
 * from the files a node reported.
 */
import { parse, parseAllDocuments } from "yaml";
import { installMocks, plain, registrations, scriptOf, settled, stdinData, valueOf, type FakeNodes } from "../helpers/mocks";
import { clusterArgs, CONTAINERD, CRIO } from "../helpers/fixtures";
import { kubeadmFiles, kubeletConfigYaml } from "../helpers/kubeadmFiles";

let Cluster: typeof import("../../../components").Cluster;
let fake: FakeNodes;

beforeAll(async () => {
  ({ fake } = await installMocks({ nodeLocal: false }));
  ({ Cluster } = await import("../../../components"));
});

interface Change {
  op: string;
  path: string;
  content?: string;
}

function changesOf(stdin: unknown): Change[] {
  return stdinData(stdin)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [op = "", path = "", , , data] = l.split(" ");
      return { op, path, ...(data !== undefined ? { content: Buffer.from(data, "base64").toString("utf8") } : {}) };
    });
}

async function build(version: string, gates: Record<string, boolean> | undefined, nodeFilesLocal: boolean) {
  registrations.splice(0);
  fake.nodeLocal = nodeFilesLocal;
  const c = new Cluster("c", clusterArgs({ kubernetesVersion: version, ...(gates ? { featureGates: gates } : {}) }));
  const status = await valueOf(c.nodes);
  await settled();
  const input = (name: string) => registrations.find((r) => r.name === name)?.inputs;
  const initDocs = parseAllDocuments(stdinData(input("c-cp1-init")?.stdin)).map((d) => d.toJS());
  const cluster = initDocs.find((d) => d.kind === "ClusterConfiguration");
  return { status, cluster, changes: (node: string) => changesOf(input(`c-${node}-kubelet`)?.stdin), script: (name: string) => String(plain(input(name)?.create)) };
}

const cases: Array<[string, Record<string, boolean> | undefined, boolean, Record<string, boolean> | undefined]> = [
  // version, featureGates given, gate in effect, featureGates kubeadm is given
  ["v1.31.4", undefined, false, undefined],
  ["v1.31.4", { NodeLocalCRISocket: false }, false, undefined],
  ["v1.32.3", { NodeLocalCRISocket: true }, true, { NodeLocalCRISocket: true }],
  ["v1.32.3", { NodeLocalCRISocket: false }, false, { NodeLocalCRISocket: false }],
  ["v1.33.2", undefined, false, undefined],
  ["v1.33.2", { NodeLocalCRISocket: true }, true, { NodeLocalCRISocket: true }],
  ["v1.33.2", { NodeLocalCRISocket: false }, false, { NodeLocalCRISocket: false }],
  ["v1.34.1", undefined, true, undefined],
  ["v1.34.1", { NodeLocalCRISocket: false }, false, { NodeLocalCRISocket: false }],
  ["v1.35.0", undefined, true, undefined],
  ["v1.36.0", undefined, true, undefined],
  ["v1.36.0", { NodeLocalCRISocket: true }, true, { NodeLocalCRISocket: true }],
  ["v1.37.0", undefined, true, undefined],
  ["v1.37.0", { NodeLocalCRISocket: true }, true, undefined],
];

describe.each(cases)("%s with featureGates %j", (version, gates, inEffect, kubeadmGates) => {
  test(`kubeadm is given featureGates ${JSON.stringify(kubeadmGates)}; node status says node-local=${inEffect}`, async () => {
    const { status, cluster } = await build(version, gates, inEffect);
    expect(cluster.kubernetesVersion).toBe(version);
    expect(cluster.featureGates).toEqual(kubeadmGates);
    expect(status.map((s) => s.nodeLocalCriSocket)).toEqual([inEffect, inEffect, inEffect, inEffect, inEffect]);
    expect(status.find((s) => s.name === "w2")?.criSocket).toBe(CRIO);
  });

  test("prepare, upgrade and kubelet refuse an endpoint flag outside kubeadm-flags.env exactly when node-local", async () => {
    const { script } = await build(version, gates, inEffect);
    for (const step of ["prepare", "upgrade", "kubelet"]) {
      expect({ step, checks: scriptOf(script(`c-w2-${step}`)).includes("\npk_no_endpoint_flag_elsewhere\n") }).toEqual({ step, checks: inEffect });
    }
  });

  test("files as this kubeadm leaves them need no change", async () => {
    const { changes } = await build(version, gates, inEffect);
    for (const n of ["cp1", "cp2", "cp3", "w1", "w2"]) expect(changes(n)).toEqual([]);
  });

  test("files in the other state converge to this version's", async () => {
    const { changes } = await build(version, gates, !inEffect);
    const w2 = changes("w2");
    if (inEffect) {
      const expected = kubeadmFiles(true, CRIO);
      expect(w2).toEqual([
        { op: "pk-write", path: "/var/lib/kubelet/instance-config.yaml", content: `containerRuntimeEndpoint: "${CRIO}"\n` },
        // The value takes the place of kubeadm's `""`, keeping its double quotes (every other byte kept).
        { op: "pk-write", path: "/var/lib/kubelet/config.yaml", content: kubeletConfigYaml(`"${CRIO}"`) },
        { op: "pk-write", path: "/var/lib/kubelet/kubeadm-flags.env", content: expected["/var/lib/kubelet/kubeadm-flags.env"] },
      ]);
    } else {
      expect(w2).toEqual([
        { op: "pk-remove", path: "/var/lib/kubelet/instance-config.yaml" },
        { op: "pk-write", path: "/var/lib/kubelet/kubeadm-flags.env", content: kubeadmFiles(false, CRIO)["/var/lib/kubelet/kubeadm-flags.env"] },
      ]);
    }
  });
});

test("1.32 with the gate on: the flag kubeadm 1.32 leaves behind is removed, user flags kept in order", async () => {
  fake.files = (_node, ep) => ({
    ...kubeadmFiles(true, ep),
    "/var/lib/kubelet/kubeadm-flags.env": `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${ep} --pod-infra-container-image=registry.k8s.io/pause:3.10 --node-ip=10.0.0.4 --v=2"\n`,
  });
  try {
    const { changes } = await build("v1.32.3", { NodeLocalCRISocket: true }, true);
    expect(changes("w1")).toEqual([
      { op: "pk-write", path: "/var/lib/kubelet/kubeadm-flags.env", content: `KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10 --node-ip=10.0.0.4 --v=2"\n` },
    ]);
  } finally {
    delete fake.files;
  }
});

test("a detected socket flows into kubeadm's config, the files and the node status", async () => {
  fake.detected = { cp3: CRIO };
  try {
    const { status, changes } = await build("v1.34.1", undefined, false);
    expect(status.find((s) => s.name === "cp3")).toEqual({ name: "cp3", role: "control-plane", criSocket: CRIO, nodeLocalCriSocket: true });
    expect(changes("cp3")[0]).toEqual({ op: "pk-write", path: "/var/lib/kubelet/instance-config.yaml", content: `containerRuntimeEndpoint: "${CRIO}"\n` });
    const join = parse(stdinData(registrations.find((r) => r.name === "c-cp3-join")?.inputs.stdin));
    expect(join.nodeRegistration.criSocket).toBe(CRIO);
    expect(changes("cp1")[0]?.content).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  } finally {
    delete fake.detected;
  }
});

test("every kubeadm reset (init/join delete and retry cleanup) names the node's CRI socket, a detected one too", async () => {
  fake.detected = { cp3: CRIO };
  try {
    await build("v1.34.1", undefined, true);
    const want: Record<string, string> = { cp1: CONTAINERD, cp2: CONTAINERD, cp3: CRIO, w1: CONTAINERD, w2: CRIO };
    for (const [node, ep] of Object.entries(want)) {
      const step = node === "cp1" ? "init" : "join";
      const inputs = registrations.find((r) => r.name === `c-${node}-${step}`)?.inputs ?? {};
      // lib.sh's pk_kubeadm_reset and pk_kubeadm_once pass their socket to `kubeadm reset --cri-socket`
      // (runOnce.test.ts runs them); here, what each step's script hands them.
      const calls = (text: unknown, fn: string) => [...scriptOf(String(plain(text))).matchAll(new RegExp(`^${fn} \\S+ '[^']*'`, "gm"))].map((m) => m[0]);
      expect({ node, delete: calls(inputs.delete, "pk_kubeadm_reset"), create: calls(inputs.create, "pk_kubeadm_once") }).toEqual({
        node,
        delete: [`pk_kubeadm_reset ${step} '${ep}'`],
        create: [`pk_kubeadm_once ${step} '${ep}'`],
      });
    }
  } finally {
    delete fake.detected;
  }
});
