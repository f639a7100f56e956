/**
 * The file transforms on a UTF-8 byte order mark and on CRLF line ends: the BOM is kept and not
 * counted as a column, inserted lines end like the file's own. From the reviewer's
 * test/unit/breaker/kubeadm-layer.test.ts (the BOM case), extended to CRLF and the other transforms.
 */
import { parse } from "yaml";
import {
  addContainerRuntimeEndpointFlag,
  getContainerRuntimeEndpoint,
  parseKubeadmFlags,
  removeContainerRuntimeEndpointFlag,
  setContainerRuntimeEndpoint,
  setFeatureGate,
} from "../../../components/kubeadm";

const EP = "unix:///run/containerd/containerd.sock";
const BOM = "\ufeff";
const KUBELET = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
const crlf = (s: string) => s.replace(/\n/g, "\r\n");
/** Every line break of `s` is CRLF (no bare LF). */
const allCrlf = (s: string) => !/(^|[^\r])\n/.test(s);

describe("config.yaml (setContainerRuntimeEndpoint)", () => {
  it("a file with a UTF-8 BOM keeps the BOM and stays parseable, the key at column 0", () => {
    const out = setContainerRuntimeEndpoint(BOM + KUBELET, EP);
    expect(out).toBe(`${BOM}apiVersion: kubelet.config.k8s.io/v1beta1\ncontainerRuntimeEndpoint: ${EP}\nkind: KubeletConfiguration\n`);
    expect(parse(out).containerRuntimeEndpoint).toBe(EP);
    expect(getContainerRuntimeEndpoint(out)).toBe(EP);
  });

  it("a BOM file: replacing an existing value keeps the BOM", () => {
    const out = setContainerRuntimeEndpoint(`${BOM}${KUBELET}containerRuntimeEndpoint: ""\n`, EP);
    expect(out).toBe(`${BOM}${KUBELET}containerRuntimeEndpoint: "${EP}"\n`);
  });

  it("a CRLF file gets a CRLF line, sorted or appended, and a missing final line end is CRLF too", () => {
    const sorted = setContainerRuntimeEndpoint(crlf(KUBELET), EP);
    expect(sorted).toBe(crlf(`apiVersion: kubelet.config.k8s.io/v1beta1\ncontainerRuntimeEndpoint: ${EP}\nkind: KubeletConfiguration\n`));
    const unsorted = setContainerRuntimeEndpoint(crlf("kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1"), EP);
    expect(unsorted).toBe(crlf(`kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\ncontainerRuntimeEndpoint: ${EP}\n`));
    expect(allCrlf(sorted) && allCrlf(unsorted)).toBe(true);
  });

  it("a CRLF flow (JSON) map with one key per line keeps CRLF in the new separator", () => {
    const json = crlf('{\n  "kind": "KubeletConfiguration"\n}\n');
    const out = setContainerRuntimeEndpoint(json, EP);
    expect(allCrlf(out)).toBe(true);
    expect(JSON.parse(out).containerRuntimeEndpoint).toBe(EP);
  });
});

describe("ClusterConfiguration (setFeatureGate)", () => {
  const CC = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nnetworking:\n  podSubnet: 10.0.0.0/8\n";

  it("a CRLF file: a new featureGates map is written with CRLF, and removed cleanly", () => {
    const on = setFeatureGate(crlf(CC), "NodeLocalCRISocket", true);
    expect(on).toBe(crlf("apiVersion: kubeadm.k8s.io/v1beta4\nfeatureGates:\n  NodeLocalCRISocket: true\nkind: ClusterConfiguration\nnetworking:\n  podSubnet: 10.0.0.0/8\n"));
    expect(setFeatureGate(on, "NodeLocalCRISocket", undefined)).toBe(crlf(CC));
  });

  it("a BOM file keeps its BOM and the new key at column 0", () => {
    const out = setFeatureGate(BOM + CC, "NodeLocalCRISocket", true);
    expect(out.startsWith(`${BOM}apiVersion: kubeadm.k8s.io/v1beta4\nfeatureGates:\n  NodeLocalCRISocket: true\n`)).toBe(true);
    expect(parse(out).featureGates).toEqual({ NodeLocalCRISocket: true });
    expect(setFeatureGate(out, "NodeLocalCRISocket", false)).toBe(out.replace(": true", ": false"));
  });
});

describe("kubeadm-flags.env", () => {
  const LINE = 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///x.sock --pod-infra-container-image=pause"';

  it("CRLF line ends are read and kept", () => {
    expect(parseKubeadmFlags(`${LINE}\r\n`)).toEqual(["--container-runtime-endpoint=unix:///x.sock", "--pod-infra-container-image=pause"]);
    expect(removeContainerRuntimeEndpointFlag(`# c\r\n${LINE}\r\n`)).toEqual({
      text: '# c\r\nKUBELET_KUBEADM_ARGS="--pod-infra-container-image=pause"\r\n',
      endpoint: "unix:///x.sock",
    });
    expect(addContainerRuntimeEndpointFlag('KUBELET_KUBEADM_ARGS="--a=b"\r\n', EP)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${EP} --a=b"\r\n`);
  });

  it("a leading BOM is kept and does not hide the line", () => {
    expect(addContainerRuntimeEndpointFlag(`${BOM}KUBELET_KUBEADM_ARGS="--a=b"\n`, EP)).toBe(`${BOM}KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${EP} --a=b"\n`);
  });
});
