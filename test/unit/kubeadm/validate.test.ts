import { caught } from "./helpers";
import { parseAllDocuments } from "yaml";
import { renderInitConfiguration, renderJoinConfiguration, JoinMaterial } from "../../../components/kubeadm/kubeadmConfig";
import { isDnsLabel, isLabelKey, isLabelValue, validateCluster } from "../../../components/kubeadm/validate";
import { ClusterSpec, KubeadmConfigError, NodeSpec } from "../../../components/kubeadm/types";

const base = (over: Partial<ClusterSpec> = {}, nodes?: NodeSpec[]): ClusterSpec => ({
  kubernetesVersion: "v1.34.2",
  nodes: nodes ?? [
    { name: "cp1", role: "control-plane", host: "10.0.0.1", criSocket: "unix:///run/containerd/containerd.sock" },
    { name: "w1", role: "worker", host: "10.0.0.2", criSocket: "/run/crio/crio.sock" },
  ],
  ...over,
});

function expectError(spec: ClusterSpec, field: string, node?: string, re?: RegExp): void {
  const err: unknown = caught(() => validateCluster(spec));
  expect(err).toBeInstanceOf(KubeadmConfigError);
  expect((err as KubeadmConfigError).field).toBe(field);
  expect((err as KubeadmConfigError).node).toBe(node);
  if (re) expect((err as Error).message).toMatch(re);
}

const cp = (o: Partial<NodeSpec> = {}): NodeSpec => ({ name: "cp1", role: "control-plane", ...o });

describe("validateCluster: success", () => {
  it("normalises and splits nodes, warns like kubeadm", () => {
    const c = validateCluster(base({ featureGates: { NodeLocalCRISocket: true, RootlessControlPlane: false } }));
    expect(c.version.text).toBe("v1.34.2");
    expect(c.controlPlane.map((n) => n.name)).toEqual(["cp1"]);
    expect(c.workers.map((n) => n.name)).toEqual(["w1"]);
    expect(c.nodes[1]).toEqual({ name: "w1", role: "worker", criSocket: "unix:///run/crio/crio.sock", kubeletExtraArgs: [], labels: {}, taints: undefined, gone: false, index: 1 });
    expect(c.nodeLocalCriSocket).toBe(true);
    expect(c.kubeadmFeatureGates).toEqual({ NodeLocalCRISocket: true, RootlessControlPlane: false });
    expect(c.warnings).toEqual([
      'node "w1": Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. Automatically prepending scheme "unix" to the "criSocket" with value "/run/crio/crio.sock". Please update your configuration!',
    ]);
    expect(c.networking).toEqual({});
    expect(c.kubeletConfiguration).toEqual({});
  });
  it("carries hostile-looking but valid data as data", () => {
    const c = validateCluster(base({ kubeletConfiguration: { evictionHard: { "memory.available": "$(reboot)`x`'\"\n" } } }));
    expect((c.kubeletConfiguration.evictionHard as Record<string, string>)["memory.available"]).toBe("$(reboot)`x`'\"\n");
  });
  it("accepts HA with an endpoint, and 1.31 with the gate false", () => {
    const c = validateCluster(base({ kubernetesVersion: "1.31.0", controlPlaneEndpoint: "lb.example.com:6443", featureGates: { NodeLocalCRISocket: false } }, [cp(), cp({ name: "cp2" })]));
    expect(c.controlPlane).toHaveLength(2);
    expect(c.nodeLocalCriSocket).toBe(false);
    expect(c.kubeadmFeatureGates).toEqual({});
    expect(c.controlPlaneEndpoint).toBe("lb.example.com:6443");
  });
});

describe("validateCluster: errors name node and field", () => {
  it("no control-plane node / no nodes", () => {
    expectError(base({}, [{ name: "w1", role: "worker" }]), "nodes", undefined, /control-plane/);
    expectError(base({}, []), "nodes");
  });
  it("duplicate names", () => expectError(base({}, [cp(), cp()]), "name", "cp1", /duplicate/));
  it("duplicate host+port, default port 22", () => {
    expectError(base({}, [cp({ host: "h" }), { name: "w1", role: "worker", host: "h", port: 22 }]), "host", "w1", /cp1/);
    expect(() => validateCluster(base({}, [cp({ host: "h" }), { name: "w1", role: "worker", host: "h", port: 2222 }]))).not.toThrow();
  });
  it.each(["cp_1", "-cp", "a".repeat(64), "cp..1", "cp.", ".cp", `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`, ""])("bad name %j", (name) => {
    expectError(base({}, [cp({ name })]), "nodes[0].name", undefined, /not an RFC 1123 DNS subdomain/);
  });
  // kubeadm validates nodeRegistration.name with IsDNS1123Subdomain: EC2-style private DNS names are fine.
  it.each(["ip-10-0-1-23.ec2.internal", "cp.1", "node-7.rack-2.dc.example.com", `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`])(
    "a DNS subdomain is a node name: %j",
    (name) => {
      expect(validateCluster(base({}, [cp({ name })])).nodes[0].name).toBe(name);
    },
  );
  it("capitals are refused with the lowercase spelling as a hint", () => {
    expectError(base({}, [cp({ name: "IP-10-0-1-23.EC2.Internal" })]), "nodes[0].name", undefined, /refuse capitals in a Node name; write it in lowercase, "ip-10-0-1-23\.ec2\.internal"$/);
    expectError(base({}, [cp({ name: "CP_1" })]), "nodes[0].name", undefined, /\)$/);
  });
  it("bad role", () => expectError(base({}, [cp(), { name: "w1", role: "master" }]), "role", "w1", /neither/));
  it("bad criSocket", () => expectError(base({}, [cp({ criSocket: "tcp://1.2.3.4:1" })]), "criSocket", "cp1", /tcp/));
  it("bad versions", () => {
    expectError(base({ kubernetesVersion: "v1.30.1" }), "kubernetesVersion", undefined, /not supported/);
    expectError(base({ kubernetesVersion: "1.34" }), "kubernetesVersion");
  });
  it("gate the version cannot honour, non-boolean gates", () => {
    expectError(base({ kubernetesVersion: "v1.31.2", featureGates: { NodeLocalCRISocket: true } }), "featureGates.NodeLocalCRISocket");
    expectError(base({ kubernetesVersion: "v1.36.0", featureGates: { NodeLocalCRISocket: false } }), "featureGates.NodeLocalCRISocket");
    expectError(base({ featureGates: { NodeLocalCRISocket: "yes" as unknown as boolean } }), "featureGates.NodeLocalCRISocket", undefined, /true or false/);
    expectError(base({ featureGates: { "a: b": true } }), "featureGates");
  });
  it("kubeletConfiguration", () => {
    expectError(base({ kubeletConfiguration: [] as unknown as Record<string, unknown> }), "kubeletConfiguration");
    expectError(base({ kubeletConfiguration: { containerRuntimeEndpoint: "unix:///x.sock" } }), "kubeletConfiguration.containerRuntimeEndpoint", undefined, /per node/);
    expectError(base({ kubeletConfiguration: { kind: "X" } }), "kubeletConfiguration.kind");
    expectError(base({ kubeletConfiguration: { f: () => 1 } }), "kubeletConfiguration.f");
  });
  it("several control-plane nodes need controlPlaneEndpoint", () => {
    expectError(base({}, [cp(), cp({ name: "cp2" })]), "controlPlaneEndpoint", undefined, /stable endpoint/);
  });
  it.each(["lb:0", "lb:99999", "http://lb:6443", "lb example", "lb:6443;rm", "[::1", "Lb.Example.com"])("bad controlPlaneEndpoint %j", (e) => {
    expectError(base({ controlPlaneEndpoint: e }), "controlPlaneEndpoint");
  });
  it("good controlPlaneEndpoints", () => {
    for (const e of ["lb", "10.0.0.10:6443", "[fd00::1]:6443", "k8s-api.example.com"]) {
      expect(validateCluster(base({ controlPlaneEndpoint: e })).controlPlaneEndpoint).toBe(e);
    }
  });
  it("networking", () => {
    expectError(base({ networking: { podSubnet: "10.0.0.0/33" } }), "networking.podSubnet");
    expectError(base({ networking: { serviceSubnet: "10.96.0.0" } }), "networking.serviceSubnet");
    expectError(base({ networking: { dnsDomain: "Cluster Local" } }), "networking.dnsDomain");
    expect(validateCluster(base({ networking: { podSubnet: "10.244.0.0/16,fd00:10::/56" } })).networking.podSubnet).toBe("10.244.0.0/16,fd00:10::/56");
  });
  it("labels", () => {
    expectError(base({}, [cp({ labels: { "bad key!": "x" } })]), "labels.bad key!", "cp1");
    expectError(base({}, [cp({ labels: { ok: "$(x)" } })]), "labels.ok", "cp1", /label value/);
    expect(validateCluster(base({}, [cp({ labels: { "example.com/zone": "a-1", e: "" } })])).nodes[0].labels).toEqual({ "example.com/zone": "a-1", e: "" });
  });
  it("taints", () => {
    expectError(base({}, [cp({ taints: [{ key: "a", effect: "Never" as never }] })]), "taints[0].effect", "cp1");
    expectError(base({}, [cp({ taints: [{ key: "a b", effect: "NoSchedule" }] })]), "taints[0].key", "cp1");
    expectError(base({}, [cp({ taints: [{ key: "a", value: "x\n", effect: "NoSchedule" }] })]), "taints[0].value", "cp1");
    expectError(base({}, [cp({ taints: [{ key: "a", effect: "NoSchedule" }, { key: "a", effect: "NoSchedule" }] })]), "taints[1]", "cp1", /duplicate/);
  });
  it("kubeletExtraArgs", () => {
    const arg = (name: string, value: string) => base({}, [cp({ kubeletExtraArgs: [{ name: "node-ip", value: "10.0.0.1" }, { name, value }] })]);
    expectError(arg("--node-ip", "x"), "kubeletExtraArgs[1].name", "cp1", /no leading dashes/);
    expectError(arg("Node_IP", "x"), "kubeletExtraArgs[1].name", "cp1");
    expectError(arg("container-runtime-endpoint", "unix:///x"), "kubeletExtraArgs[1].name", "cp1", /criSocket/);
    expectError(arg("v", "2\n--evil=1"), "kubeletExtraArgs[1].value", "cp1");
    expectError(arg("v", "2\r"), "kubeletExtraArgs[1].value", "cp1");
    expectError(arg("v", "a\u0000"), "kubeletExtraArgs[1].value", "cp1");
    expectError(arg("v", "a b"), "kubeletExtraArgs[1].value", "cp1", /whitespace/);
    expect(validateCluster(arg("max-pods", "$(x)`y`'\"")).nodes[0].kubeletExtraArgs[1]).toEqual({ name: "max-pods", value: "$(x)`y`'\"" });
  });
  it("host and port", () => {
    expectError(base({}, [cp({ host: "a;b" })]), "host", "cp1");
    expectError(base({}, [cp({ host: "h", port: 0 })]), "port", "cp1");
  });
  it("helpers", () => {
    expect(isDnsLabel("a-1")).toBe(true);
    expect(isDnsLabel("a-")).toBe(false);
    expect(isLabelKey("kubernetes.io/hostname")).toBe(true);
    expect(isLabelKey("a/b/c")).toBe(false);
    expect(isLabelValue("")).toBe(true);
    expect(isLabelValue("-a")).toBe(false);
  });
});

describe("kubeadm config rendering (v1beta4)", () => {
  const hostile = "$(reboot)`id`'\"";
  const cluster = validateCluster(base({
    controlPlaneEndpoint: "lb.example.com:6443",
    networking: { podSubnet: "10.244.0.0/16" },
    featureGates: { NodeLocalCRISocket: true },
    kubeletConfiguration: { cgroupDriver: "systemd", evictionHard: { "memory.available": hostile } },
  }, [
    cp({ kubeletExtraArgs: [{ name: "node-ip", value: "10.0.0.1" }], taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }], labels: { a: "b" } }),
    cp({ name: "cp2" }),
    { name: "w1", role: "worker" },
  ]));
  it("init: three documents with the expected fields", () => {
    const text = renderInitConfiguration(cluster, cluster.nodes[0], "unix:///run/containerd/containerd.sock");
    const docs = parseAllDocuments(text).map((d) => (Array.isArray(d) ? d : d).toJS());
    expect(docs).toEqual([
      {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind: "InitConfiguration",
        nodeRegistration: {
          name: "cp1",
          criSocket: "unix:///run/containerd/containerd.sock",
          taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" }],
          kubeletExtraArgs: [{ name: "node-ip", value: "10.0.0.1" }],
        },
      },
      {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind: "ClusterConfiguration",
        kubernetesVersion: "v1.34.2",
        controlPlaneEndpoint: "lb.example.com:6443",
        networking: { podSubnet: "10.244.0.0/16" },
        featureGates: { NodeLocalCRISocket: true },
      },
      { cgroupDriver: "systemd", evictionHard: { "memory.available": hostile }, apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration" },
    ]);
    expect(text).not.toMatch(/labels|containerRuntimeEndpoint/);
  });
  it("init: omits criSocket, taints and featureGates when absent", () => {
    const c = validateCluster(base({ kubernetesVersion: "v1.37.0", featureGates: { NodeLocalCRISocket: true } }, [cp()]));
    const text = renderInitConfiguration(c, c.nodes[0], undefined);
    expect(text.split("---\n")[0]).toBe("apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration:\n  name: cp1\n");
    expect(text).not.toMatch(/featureGates|taints|criSocket/);
  });
  it("taints: [] means none (an empty list, not kubeadm's default control-plane taint); unset means the default", () => {
    const none = validateCluster(base({ kubernetesVersion: "v1.34.2" }, [cp({ taints: [] })]));
    expect(renderInitConfiguration(none, none.nodes[0], undefined)).toContain("nodeRegistration:\n  name: cp1\n  taints: []\n");
    const unset = validateCluster(base({ kubernetesVersion: "v1.34.2" }, [cp()]));
    expect(renderInitConfiguration(unset, unset.nodes[0], undefined)).not.toContain("taints");
  });
  it("init refuses a worker", () => expect(() => renderInitConfiguration(cluster, cluster.nodes[2], undefined)).toThrow(KubeadmConfigError));
  const material: JoinMaterial = {
    apiServerEndpoint: "lb.example.com:6443",
    token: "abcdef.0123456789abcdef",
    caCertHashes: [`sha256:${"a".repeat(64)}`],
    certificateKey: "b".repeat(64),
  };
  it("join: worker and control plane", () => {
    const w = parseAllDocuments(renderJoinConfiguration(cluster, cluster.nodes[2], "unix:///run/crio/crio.sock", material));
    expect(w).toHaveLength(1);
    expect((w as unknown as { toJS(): unknown }[])[0].toJS()).toEqual({
      apiVersion: "kubeadm.k8s.io/v1beta4",
      kind: "JoinConfiguration",
      nodeRegistration: { name: "w1", criSocket: "unix:///run/crio/crio.sock" },
      discovery: { bootstrapToken: { apiServerEndpoint: "lb.example.com:6443", token: material.token, caCertHashes: material.caCertHashes } },
    });
    const c = (parseAllDocuments(renderJoinConfiguration(cluster, cluster.nodes[1], undefined, material)) as unknown as { toJS(): Record<string, unknown> }[])[0].toJS();
    expect(c.controlPlane).toEqual({ certificateKey: material.certificateKey });
    expect(c.nodeRegistration).toEqual({ name: "cp2" });
  });
  it("join refuses malformed material without echoing secrets", () => {
    const err: unknown = caught(() => renderJoinConfiguration(cluster, cluster.nodes[2], undefined, { ...material, token: "secret\nvalue" }));
    expect((err as KubeadmConfigError).field).toBe("joinMaterial.token");
    expect((err as Error).message).not.toMatch(/secret/);
    expect(() => renderJoinConfiguration(cluster, cluster.nodes[2], undefined, { ...material, caCertHashes: [] })).toThrow(/caCertHashes/);
    expect(() => renderJoinConfiguration(cluster, cluster.nodes[2], undefined, { ...material, apiServerEndpoint: "lb" })).toThrow(/host:port/);
  });
});
