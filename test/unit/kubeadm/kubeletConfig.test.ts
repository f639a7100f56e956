import { caught } from "./helpers";
import { getContainerRuntimeEndpoint, setContainerRuntimeEndpoint } from "../../../components/kubeadm/kubeletConfig";
import { FileEditError } from "../../../components/kubeadm/yamlEdit";

const SOCK = "unix:///var/run/containerd/containerd.sock";
const CRIO = "unix:///run/crio/crio.sock";

// The config.yaml example of kubeadm-facts.md (gate on, containerd).
const FACTS_EXAMPLE = `apiVersion: kubelet.config.k8s.io/v1beta1
authentication:
  anonymous:
    enabled: false
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock
healthzBindAddress: 127.0.0.1
healthzPort: 10248
kind: KubeletConfiguration
rotateCertificates: true
staticPodPath: /etc/kubernetes/manifests
`;

describe("getContainerRuntimeEndpoint", () => {
  it("reads the facts example", () => expect(getContainerRuntimeEndpoint(FACTS_EXAMPLE)).toBe(SOCK));
  it("reads kubeadm's empty value and absence", () => {
    expect(getContainerRuntimeEndpoint('kind: KubeletConfiguration\ncontainerRuntimeEndpoint: ""\n')).toBe("");
    expect(getContainerRuntimeEndpoint("kind: KubeletConfiguration\n")).toBeUndefined();
    expect(getContainerRuntimeEndpoint("kind: KubeletConfiguration\ncontainerRuntimeEndpoint:\n")).toBeUndefined();
  });
  it("refuses a non-string", () => {
    expect(() => getContainerRuntimeEndpoint("kind: KubeletConfiguration\ncontainerRuntimeEndpoint: 5\n")).toThrow(/not a string/);
  });
});

describe("setContainerRuntimeEndpoint", () => {
  it("returns the same string when already equal", () => {
    expect(setContainerRuntimeEndpoint(FACTS_EXAMPLE, SOCK)).toBe(FACTS_EXAMPLE);
    expect(setContainerRuntimeEndpoint(FACTS_EXAMPLE, "/var/run/containerd/containerd.sock")).toBe(FACTS_EXAMPLE);
  });
  it("changes only the value (plain stays plain)", () => {
    expect(setContainerRuntimeEndpoint(FACTS_EXAMPLE, CRIO)).toBe(FACTS_EXAMPLE.replace(SOCK, CRIO));
  });
  it("fills kubeadm's empty double-quoted value", () => {
    const input = FACTS_EXAMPLE.replace(`containerRuntimeEndpoint: ${SOCK}`, 'containerRuntimeEndpoint: ""');
    expect(setContainerRuntimeEndpoint(input, SOCK)).toBe(FACTS_EXAMPLE.replace(`: ${SOCK}`, `: "${SOCK}"`));
  });
  it("keeps single quotes and fills an empty value", () => {
    expect(setContainerRuntimeEndpoint("kind: KubeletConfiguration\ncontainerRuntimeEndpoint: 'x' # old\n", CRIO)).toBe(
      `kind: KubeletConfiguration\ncontainerRuntimeEndpoint: '${CRIO}' # old\n`,
    );
    expect(setContainerRuntimeEndpoint("kind: KubeletConfiguration\ncontainerRuntimeEndpoint:\n", CRIO)).toBe(
      `kind: KubeletConfiguration\ncontainerRuntimeEndpoint: ${CRIO}\n`,
    );
  });
  it("inserts at the sorted position of kubeadm's marshaller", () => {
    const without = FACTS_EXAMPLE.replace(`containerRuntimeEndpoint: ${SOCK}\n`, "");
    expect(setContainerRuntimeEndpoint(without, SOCK)).toBe(FACTS_EXAMPLE);
  });
  it("keeps comments and puts the key before the comment of the next key", () => {
    const input = `# written by kubeadm\napiVersion: kubelet.config.k8s.io/v1beta1 # api\nclusterDomain: cluster.local\n# health\nhealthzPort: 10248\nkind: KubeletConfiguration\n`;
    expect(setContainerRuntimeEndpoint(input, SOCK)).toBe(
      `# written by kubeadm\napiVersion: kubelet.config.k8s.io/v1beta1 # api\nclusterDomain: cluster.local\ncontainerRuntimeEndpoint: ${SOCK}\n# health\nhealthzPort: 10248\nkind: KubeletConfiguration\n`,
    );
  });
  it("appends when the keys are not sorted (and adds a missing final newline)", () => {
    expect(setContainerRuntimeEndpoint("kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1", SOCK)).toBe(
      `kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\ncontainerRuntimeEndpoint: ${SOCK}\n`,
    );
  });
  it("appends after a nested last key", () => {
    expect(setContainerRuntimeEndpoint("z: 0\nkind: KubeletConfiguration\ny:\n  a: 1 # c\n", SOCK)).toBe(
      `z: 0\nkind: KubeletConfiguration\ny:\n  a: 1 # c\ncontainerRuntimeEndpoint: ${SOCK}\n`,
    );
  });
  it("edits JSON and keeps it JSON", () => {
    const json = `{\n  "apiVersion": "kubelet.config.k8s.io/v1beta1",\n  "kind": "KubeletConfiguration",\n  "containerRuntimeEndpoint": "${SOCK}"\n}\n`;
    expect(setContainerRuntimeEndpoint(json, CRIO)).toBe(json.replace(SOCK, CRIO));
    const sorted = `{\n  "apiVersion": "kubelet.config.k8s.io/v1beta1",\n  "clusterDomain": "cluster.local",\n  "kind": "KubeletConfiguration"\n}\n`;
    const out = setContainerRuntimeEndpoint(sorted, CRIO);
    expect(out).toBe(`{\n  "apiVersion": "kubelet.config.k8s.io/v1beta1",\n  "clusterDomain": "cluster.local",\n  "containerRuntimeEndpoint": "${CRIO}",\n  "kind": "KubeletConfiguration"\n}\n`);
    expect(JSON.parse(out).containerRuntimeEndpoint).toBe(CRIO);
    const oneLine = `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1"}`;
    const out2 = setContainerRuntimeEndpoint(oneLine, CRIO);
    expect(out2).toBe(`{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","containerRuntimeEndpoint":"${CRIO}"}`);
    expect(JSON.parse(out2).containerRuntimeEndpoint).toBe(CRIO);
  });
  it.each([
    ["parse error", "kind: KubeletConfiguration\n  bad: [\n", /cannot be parsed/],
    ["two documents", "kind: KubeletConfiguration\n---\nkind: KubeletConfiguration\n", /2 YAML documents/],
    ["empty", "", /empty/],
    ["root list", "- kind\n", /root is not a map/],
    ["duplicate keys", "kind: KubeletConfiguration\nkind: KubeletConfiguration\n", /unique/],
    ["alias value", "kind: KubeletConfiguration\nx: &a unix:///a.sock\ncontainerRuntimeEndpoint: *a\n", /alias/],
    ["anchor value", "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: &a unix:///a.sock\n", /anchor/],
    ["tag", "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: !!str unix:///a.sock\n", /tag/],
    ["merge key", "kind: KubeletConfiguration\n<<: {containerRuntimeEndpoint: x}\n", /merge key/],
    ["other kind", "kind: KubeProxyConfiguration\n", /kind is "KubeProxyConfiguration"/],
    ["no kind", "apiVersion: kubelet.config.k8s.io/v1beta1\n", /kind is null/],
    ["other apiVersion", "apiVersion: v1\nkind: KubeletConfiguration\n", /apiVersion/],
    ["block scalar", "kind: KubeletConfiguration\ncontainerRuntimeEndpoint: |\n  x\n", /block scalar/],
    ["map value", "kind: KubeletConfiguration\ncontainerRuntimeEndpoint:\n  a: 1\n", /is a map/],
  ])("refuses %s", (_label, input, re) => {
    const err: unknown = caught(() => setContainerRuntimeEndpoint(input, SOCK));
    expect(err).toBeInstanceOf(FileEditError);
    expect((err as Error).message).toMatch(re);
  });
  it("refuses a bad endpoint", () => expect(() => setContainerRuntimeEndpoint(FACTS_EXAMPLE, "tcp://x:1")).toThrow(/tcp/));
});
