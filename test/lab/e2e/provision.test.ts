/**
 * The main job end to end on the lab: the real root program provisions a mixed-runtime cluster (three
 * control-plane nodes, two workers, one on CRI-O, one node's socket detected) over real SSH, and every
 * node's files and the stand-in cluster store hold exactly what kubeadm-facts.md says for that version.
 * A second apply with nothing changed runs no remote command.
 */
import { CONTAINERD, CONTAINERD_PROBED, CRIO, MIXED, labDown, labUp, nodeFile, ok, run, ran, storeNodes, writeStack, E2E_TEST_LIMIT_MS } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);

afterAll(labDown);

const ENDPOINT: Record<string, string> = {
  "cp-1": CONTAINERD,
  "cp-2": CONTAINERD,
  "cp-3": CONTAINERD_PROBED,
  "worker-1": CONTAINERD,
  "worker-2": CRIO,
};

const cases: Array<[string, string, Record<string, boolean> | undefined, boolean]> = [
  ["1.31", "v1.31.6", undefined, false],
  ["1.33 with the gate on", "v1.33.2", { NodeLocalCRISocket: true }, true],
  ["1.33 with the gate off", "v1.33.2", { NodeLocalCRISocket: false }, false],
  ["1.34", "v1.34.2", undefined, true],
  ["1.36", "v1.36.0", undefined, true],
];

describe.each(cases)("%s", (label, version, gates, nodeLocal) => {
  const stack = writeStack(label.replace(/\W+/g, "-"), version, MIXED, gates ? { "kubeadm:featureGates": gates } : {});

  test(`apply provisions the cluster; files and store match kubeadm ${version} with the gate ${nodeLocal ? "in effect" : "not in effect"}`, async () => {
    await labUp(stack);
    const result = await run(stack);
    ok(result);
    const nodes = storeNodes();
    expect(Object.keys(nodes).sort()).toEqual(MIXED.map((n) => n.name).sort());
    for (const n of MIXED) {
      const ep = ENDPOINT[n.name] as string;
      const flags = nodeFile(n.name, "/var/lib/kubelet/kubeadm-flags.env") ?? "";
      const config = nodeFile(n.name, "/var/lib/kubelet/config.yaml") ?? "";
      const annotation = nodes[n.name]?.metadata.annotations["kubeadm.alpha.kubernetes.io/cri-socket"];
      if (nodeLocal) {
        expect({ node: n.name, instance: nodeFile(n.name, "/var/lib/kubelet/instance-config.yaml") }).toEqual({ node: n.name, instance: `containerRuntimeEndpoint: "${ep}"\n` });
        expect({ node: n.name, config: /^containerRuntimeEndpoint: "?([^"\n]*)"?$/m.exec(config)?.[1] }).toEqual({ node: n.name, config: ep });
        expect({ node: n.name, flag: flags.includes("--container-runtime-endpoint") }).toEqual({ node: n.name, flag: false });
        expect({ node: n.name, annotation }).toEqual({ node: n.name, annotation: undefined });
      } else {
        expect({ node: n.name, instance: nodeFile(n.name, "/var/lib/kubelet/instance-config.yaml") }).toEqual({ node: n.name, instance: undefined });
        expect({ node: n.name, flag: flags.includes(`--container-runtime-endpoint=${ep}`) }).toEqual({ node: n.name, flag: true });
        expect({ node: n.name, annotation }).toEqual({ node: n.name, annotation: ep });
      }
      for (const [k, v] of Object.entries(n.labels ?? {})) expect(nodes[n.name]?.metadata.labels[k]).toBe(v);
    }
    const status = result.outputs.nodes as Array<{ name: string; criSocket: string; nodeLocalCriSocket: boolean }>;
    expect(status.map((s) => [s.name, s.criSocket, s.nodeLocalCriSocket])).toEqual(MIXED.map((n) => [n.name, ENDPOINT[n.name], nodeLocal]));
    expect(result.outputs.kubeconfig).toBe("[secret]");
  });

  if (label === "1.34") {
    test("a second apply with nothing changed runs no remote command", async () => {
      const again = await run(stack);
      expect(again.ok).toBe(true);
      expect(ran(again)).toEqual([]);
      expect(Object.values(again.sshSessions).reduce((a, b) => a + b, 0)).toBe(0);
    });
  }
});
