/**
 * Everything the component writes for kubeadm reads back as the same values in YAML 1.1, which
 * kubeadm's decoder (sigs.k8s.io/yaml on go-yaml v2) implements: rendered configs are parsed with the
 * `yaml` package in YAML 1.1 mode, and every plain scalar is also checked against go-yaml v2's own
 * number and timestamp rules (restated here from go-yaml's resolve.go, independently of the code).
 */
import { isScalar, parseAllDocuments, parseDocument, visit } from "yaml";
import { renderInitConfiguration, renderJoinConfiguration } from "../../../components/kubeadm/kubeadmConfig";
import { validateCluster } from "../../../components/kubeadm/validate";
import { setFeatureGate } from "../../../components/kubeadm/clusterConfig";
import { setContainerRuntimeEndpoint } from "../../../components/kubeadm/kubeletConfig";
import { stringifyYaml11, yaml11PlainSafe } from "../../../components/kubeadm/yaml11";

/** go-yaml v2 (resolve.go) on a plain scalar: anything it would not hand back as a string. */
function goYamlNonString(s: string): boolean {
  const bools = ["y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"];
  const nulls = ["", "~", "null", "Null", "NULL"];
  const plain = s.replace(/_/g, "");
  return (
    bools.includes(s) ||
    nulls.includes(s) ||
    [".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN", ".NAN", "<<"].includes(s) ||
    /^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/.test(plain) ||
    /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(plain) ||
    /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$/.test(s) ||
    /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$/.test(s)
  );
}

/** Every plain string scalar in `text` (keys and values) that go-yaml v2 would read as something else. */
function misreadByGoYaml(text: string): string[] {
  const bad: string[] = [];
  for (const doc of parseAllDocuments(text, { version: "1.1" })) {
    visit(doc, {
      Scalar(_k, node) {
        if (isScalar(node) && node.type === "PLAIN" && goYamlNonString(String(node.source ?? node.value)) && typeof node.value !== "boolean" && typeof node.value !== "number") {
          bad.push(String(node.source ?? node.value));
        }
      },
    });
  }
  return bad;
}

const read11 = (text: string): unknown[] => parseAllDocuments(text, { version: "1.1" }).map((d) => d.toJS());

describe("yaml11PlainSafe", () => {
  it.each(["no", "yes", "on", "off", "y", "n", "Y", "NO", "~", "null", "true", "123", "0777", "0o17", "0x1F", "0b101", "1_000", "1e3", "089", ".5", "1:20", "2001-12-14", "2001-1-2", "<<", "=", "a: b", "- x", "#c", " x", ""])(
    "%j must be quoted",
    (s) => expect(yaml11PlainSafe(s)).toBe(false),
  );
  it.each(["worker-1", "ip-10-0-1-23.ec2.internal", "v1.34.2", "10.0.0.1", "10.244.0.0/16", "unix:///run/containerd/containerd.sock", "NoSchedule", "sha256:abc"])(
    "%j stays plain",
    (s) => expect(yaml11PlainSafe(s)).toBe(true),
  );
});

describe("rendered kubeadm configs round-trip through a YAML 1.1 reader", () => {
  /** kubelet flag values YAML 1.1 or go-yaml v2 would read as a boolean, null, number, timestamp or merge key. */
  const ARGS = [
    { name: "y", value: "on" },
    { name: "node-labels", value: "~" },
    { name: "v", value: "0o17" },
    { name: "max-pods", value: "1_000" },
    { name: "a", value: "<<" },
    { name: "b", value: "2001-1-2" },
    { name: "c", value: "null" },
    { name: "d", value: "1:20" },
  ];
  const cluster = validateCluster({
    kubernetesVersion: "v1.34.2",
    controlPlaneEndpoint: "1:20",
    networking: { dnsDomain: "no" },
    featureGates: { NodeLocalCRISocket: true },
    kubeletConfiguration: { cgroupDriver: "systemd", on: "off", maxPods: 110, serializeImagePulls: false, featureGates: { GracefulNodeShutdown: true } },
    nodes: [
      {
        name: "no",
        role: "control-plane",
        host: "10.0.0.1",
        criSocket: "unix:///run/containerd/containerd.sock",
        taints: [{ key: "yes", value: "0x1F", effect: "NoSchedule" }],
        kubeletExtraArgs: ARGS,
      },
      { name: "0o17", role: "control-plane", host: "10.0.0.2" },
      { name: "2001-12-14", role: "worker", host: "10.0.0.3", taints: [{ key: "on", value: "yes", effect: "NoExecute" }] },
      { name: "1e3", role: "worker", host: "10.0.0.4" },
    ],
  });

  it("init: InitConfiguration, ClusterConfiguration and KubeletConfiguration read back as given", () => {
    const text = renderInitConfiguration(cluster, cluster.nodes[0], "unix:///run/containerd/containerd.sock");
    expect(misreadByGoYaml(text)).toEqual([]);
    expect(read11(text)).toEqual([
      {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind: "InitConfiguration",
        nodeRegistration: {
          name: "no",
          criSocket: "unix:///run/containerd/containerd.sock",
          taints: [{ key: "yes", value: "0x1F", effect: "NoSchedule" }],
          kubeletExtraArgs: ARGS,
        },
      },
      {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind: "ClusterConfiguration",
        kubernetesVersion: "v1.34.2",
        controlPlaneEndpoint: "1:20",
        networking: { dnsDomain: "no" },
        featureGates: { NodeLocalCRISocket: true },
      },
      {
        cgroupDriver: "systemd",
        on: "off",
        maxPods: 110,
        serializeImagePulls: false,
        featureGates: { GracefulNodeShutdown: true },
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
      },
    ]);
  });

  it("join: node names, taints and the secret join material read back as strings", () => {
    const material = { apiServerEndpoint: "1:20", token: "123456.1234567890123456", caCertHashes: [`sha256:${"1".repeat(64)}`], certificateKey: "1".repeat(64) };
    const cp = renderJoinConfiguration(cluster, cluster.nodes[1], undefined, material);
    expect(misreadByGoYaml(cp)).toEqual([]);
    expect(read11(cp)).toEqual([
      {
        apiVersion: "kubeadm.k8s.io/v1beta4",
        kind: "JoinConfiguration",
        nodeRegistration: { name: "0o17" },
        discovery: { bootstrapToken: { apiServerEndpoint: "1:20", token: "123456.1234567890123456", caCertHashes: [`sha256:${"1".repeat(64)}`] } },
        controlPlane: { certificateKey: "1".repeat(64) },
      },
    ]);
    for (const [i, name] of [[2, "2001-12-14"], [3, "1e3"]] as const) {
      const text = renderJoinConfiguration(cluster, cluster.nodes[i], "unix:///var/run/crio/crio.sock", { ...material, certificateKey: undefined });
      expect(misreadByGoYaml(text)).toEqual([]);
      expect((read11(text)[0] as { nodeRegistration: { name: unknown } }).nodeRegistration.name).toBe(name);
    }
  });

  it("plain strings stay plain (nothing quoted that need not be)", () => {
    expect(stringifyYaml11({ name: "worker-1", v: "v1.34.2", port: 5, b: true, e: "", n: "x", m: "<<" })).toBe(
      'name: worker-1\nv: v1.34.2\nport: 5\nb: true\ne: ""\n"n": x\nm: !!str "<<"\n',
    );
  });
});

describe("file edits write YAML 1.1-safe text", () => {
  it("a new featureGates key that YAML 1.1 reads as a boolean is quoted", () => {
    const text = setFeatureGate("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n", "On", true);
    expect(text).toBe('apiVersion: kubeadm.k8s.io/v1beta4\nfeatureGates:\n  "On": true\nkind: ClusterConfiguration\n');
    expect(read11(text)).toEqual([{ apiVersion: "kubeadm.k8s.io/v1beta4", featureGates: { On: true }, kind: "ClusterConfiguration" }]);
  });
  it("config.yaml's containerRuntimeEndpoint reads back as the endpoint", () => {
    const text = setContainerRuntimeEndpoint("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", "unix:///run/containerd/containerd.sock");
    expect(parseDocument(text, { version: "1.1" }).toJS().containerRuntimeEndpoint).toBe("unix:///run/containerd/containerd.sock");
    expect(misreadByGoYaml(text)).toEqual([]);
  });
});
