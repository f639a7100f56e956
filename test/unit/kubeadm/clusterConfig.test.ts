import { caught } from "./helpers";
import { setFeatureGate } from "../../../components/kubeadm/clusterConfig";
import { FileEditError } from "../../../components/kubeadm/yamlEdit";

// What `kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}'` shows (abridged).
const CC = `apiServer: {}
apiVersion: kubeadm.k8s.io/v1beta4
caCertificateValidityPeriod: 87600h0m0s
certificatesDir: /etc/kubernetes/pki
clusterName: kubernetes
controlPlaneEndpoint: lb.example.com:6443
controllerManager: {}
dns: {}
encryptionAlgorithm: RSA-2048
etcd:
  local:
    dataDir: /var/lib/etcd
imageRepository: registry.k8s.io
kind: ClusterConfiguration
kubernetesVersion: v1.33.4
networking:
  dnsDomain: cluster.local
  podSubnet: 10.244.0.0/16
  serviceSubnet: 10.96.0.0/12
proxy: {}
scheduler: {}
`;
const WITH = CC.replace("etcd:\n", "etcd:\n").replace("imageRepository:", "featureGates:\n  NodeLocalCRISocket: true\nimageRepository:");

describe("setFeatureGate", () => {
  it("creates featureGates at its sorted position", () => {
    expect(setFeatureGate(CC, "NodeLocalCRISocket", true)).toBe(WITH);
  });
  it("same string when unchanged", () => {
    expect(setFeatureGate(WITH, "NodeLocalCRISocket", true)).toBe(WITH);
    expect(setFeatureGate(CC, "NodeLocalCRISocket", undefined)).toBe(CC);
  });
  it("flips a value in place", () => {
    expect(setFeatureGate(WITH, "NodeLocalCRISocket", false)).toBe(WITH.replace("NodeLocalCRISocket: true", "NodeLocalCRISocket: false"));
  });
  it("removes the entry and the emptied map", () => {
    expect(setFeatureGate(WITH, "NodeLocalCRISocket", undefined)).toBe(CC);
  });
  it("inserts and removes within a map with other gates, keeping comments", () => {
    const two = CC.replace("imageRepository:", "featureGates:\n  # keep me\n  ControlPlaneKubeletLocalMode: true\n  WaitForAllControlPlaneComponents: false\nimageRepository:");
    const three = two.replace("  WaitForAll", "  NodeLocalCRISocket: true\n  WaitForAll");
    expect(setFeatureGate(two, "NodeLocalCRISocket", true)).toBe(three);
    expect(setFeatureGate(three, "NodeLocalCRISocket", undefined)).toBe(two);
  });
  it("appends to an unsorted featureGates map", () => {
    const t = "kind: ClusterConfiguration\nfeatureGates:\n    Zeta: true\n    Alpha: false\n";
    expect(setFeatureGate(t, "NodeLocalCRISocket", true)).toBe(t + "    NodeLocalCRISocket: true\n");
  });
  it("uses the file's indentation for a new map", () => {
    const t = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n    podSubnet: 10.0.0.0/8\n";
    expect(setFeatureGate(t, "NodeLocalCRISocket", false)).toBe(
      "apiVersion: kubeadm.k8s.io/v1beta4\nfeatureGates:\n    NodeLocalCRISocket: false\nkind: ClusterConfiguration\nnetworking:\n    podSubnet: 10.0.0.0/8\n",
    );
  });
  it("fills an empty flow map", () => {
    expect(setFeatureGate("featureGates: {}\nkind: ClusterConfiguration\n", "NodeLocalCRISocket", true)).toBe(
      'featureGates: {"NodeLocalCRISocket": true}\nkind: ClusterConfiguration\n',
    );
  });
  it.each([
    ["not a ClusterConfiguration", "kind: InitConfiguration\n", /kind is "InitConfiguration"/],
    ["parse error", "kind: ClusterConfiguration\nfeatureGates: [\n", /cannot be parsed/],
    ["featureGates a list", "kind: ClusterConfiguration\nfeatureGates:\n- a\n", /not a map/],
    ["string gate value", "kind: ClusterConfiguration\nfeatureGates:\n  NodeLocalCRISocket: \"true\"\n", /not a boolean/],
    ["featureGates null", "kind: ClusterConfiguration\nfeatureGates:\n", /is null/],
    ["wrong apiVersion", "apiVersion: v1\nkind: ClusterConfiguration\n", /apiVersion/],
    ["alias", "kind: ClusterConfiguration\nx: &a {A: true}\nfeatureGates: *a\n", /alias/],
  ])("refuses %s", (_l, text, re) => {
    const err: unknown = caught(() => setFeatureGate(text, "NodeLocalCRISocket", true));
    expect(err).toBeInstanceOf(FileEditError);
    expect((err as Error).message).toMatch(re);
  });
  it("refuses a hostile gate name", () => {
    expect(() => setFeatureGate(CC, "A: b\nc", true)).toThrow(/not a feature gate name/);
  });
});
