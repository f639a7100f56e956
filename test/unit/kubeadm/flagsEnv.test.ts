import { caught } from "./helpers";
import {
  addContainerRuntimeEndpointFlag,
  parseKubeadmFlags,
  removeContainerRuntimeEndpointFlag,
  renderKubeadmFlagsEnv,
} from "../../../components/kubeadm/flagsEnv";
import { FileEditError } from "../../../components/kubeadm/yamlEdit";

const SOCK = "unix:///var/run/containerd/containerd.sock";
const LEGACY = `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${SOCK} --pod-infra-container-image=registry.k8s.io/pause:3.10"\n`;
const USER = `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${SOCK} --hostname-override=n1 --node-ip=10.0.0.5 --max-pods=200"\n`;

describe("parseKubeadmFlags", () => {
  it("parses the facts example and an empty value", () => {
    expect(parseKubeadmFlags(LEGACY)).toEqual([`--container-runtime-endpoint=${SOCK}`, "--pod-infra-container-image=registry.k8s.io/pause:3.10"]);
    expect(parseKubeadmFlags('KUBELET_KUBEADM_ARGS=""\n')).toEqual([]);
  });
  it("keeps other lines out", () => {
    expect(parseKubeadmFlags(`# comment\n\nOTHER=1\n${LEGACY}`)).toHaveLength(2);
  });
  it.each([
    ["no line", "# nothing\n", /has no KUBELET_KUBEADM_ARGS/],
    ["two lines", LEGACY + LEGACY, /more than one/],
    ["unquoted", "KUBELET_KUBEADM_ARGS=--a=b\n", /not a Go-quoted/],
    ["single quotes", "KUBELET_KUBEADM_ARGS='--a=b'\n", /not a Go-quoted/],
    ["trailing text", 'KUBELET_KUBEADM_ARGS="--a=b" x\n', /not a Go-quoted/],
    ["a stray CR inside the line", 'KUBELET_KUBEADM_ARGS="--a=b"\r \n', /not a Go-quoted/],
    ["export form", 'export KUBELET_KUBEADM_ARGS="--a=b"\n', /kubeadm's form/],
  ])("refuses %s", (_l, text, re) => {
    const err: unknown = caught(() => parseKubeadmFlags(text));
    expect(err).toBeInstanceOf(FileEditError);
    expect((err as Error).message).toMatch(re);
  });
});

describe("removeContainerRuntimeEndpointFlag", () => {
  it("removes the flag and reports the endpoint (facts example)", () => {
    expect(removeContainerRuntimeEndpointFlag(LEGACY)).toEqual({
      text: 'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n',
      endpoint: SOCK,
    });
  });
  it("keeps user flags after kubeadm's own, in order", () => {
    expect(removeContainerRuntimeEndpointFlag(USER).text).toBe('KUBELET_KUBEADM_ARGS="--hostname-override=n1 --node-ip=10.0.0.5 --max-pods=200"\n');
  });
  it("keeps other lines, comments and blank lines byte for byte", () => {
    const text = `# kubeadm managed\n\nX="a  b"\n${LEGACY}# tail`;
    expect(removeContainerRuntimeEndpointFlag(text).text).toBe(
      `# kubeadm managed\n\nX="a  b"\nKUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n# tail`,
    );
  });
  it("handles the space form and equal duplicates, leaving an empty value", () => {
    expect(removeContainerRuntimeEndpointFlag(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint ${SOCK} --container-runtime-endpoint=${SOCK}"\n`)).toEqual({
      text: 'KUBELET_KUBEADM_ARGS=""\n',
      endpoint: SOCK,
    });
  });
  it("returns the same string without the flag (also on an empty value)", () => {
    const t = 'KUBELET_KUBEADM_ARGS="--node-ip=10.0.0.1"\n';
    expect(removeContainerRuntimeEndpointFlag(t).text).toBe(t);
    expect(removeContainerRuntimeEndpointFlag(t).endpoint).toBeUndefined();
    const e = 'KUBELET_KUBEADM_ARGS=""\n';
    expect(removeContainerRuntimeEndpointFlag(e)).toEqual({ text: e });
  });
  it.each([
    ["different values", `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${SOCK} --container-runtime-endpoint=unix:///run/crio/crio.sock"\n`, /different values/],
    ["no value at end", 'KUBELET_KUBEADM_ARGS="--node-ip=1.2.3.4 --container-runtime-endpoint"\n', /no value/],
    ["flag as value", 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint --node-ip=1.2.3.4"\n', /no value/],
    ["empty value", 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint="\n', /empty value/],
  ])("refuses %s", (_l, text, re) => {
    expect(() => removeContainerRuntimeEndpointFlag(text)).toThrow(re);
  });
});

describe("addContainerRuntimeEndpointFlag", () => {
  it("adds the flag first, before kubeadm's and the user's flags", () => {
    const without = 'KUBELET_KUBEADM_ARGS="--hostname-override=n1 --node-ip=10.0.0.5 --max-pods=200"\n';
    expect(addContainerRuntimeEndpointFlag(without, SOCK)).toBe(USER);
  });
  it("works on an empty flags value (1.35+)", () => {
    expect(addContainerRuntimeEndpointFlag('KUBELET_KUBEADM_ARGS=""\n', "/var/run/containerd/containerd.sock")).toBe(
      `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${SOCK}"\n`,
    );
  });
  it("returns the same string when already so", () => {
    expect(addContainerRuntimeEndpointFlag(LEGACY, SOCK)).toBe(LEGACY);
  });
  it("replaces the value in place", () => {
    expect(addContainerRuntimeEndpointFlag(USER, "unix:///run/crio/crio.sock")).toBe(USER.replace(SOCK, "unix:///run/crio/crio.sock"));
    expect(addContainerRuntimeEndpointFlag(`KUBELET_KUBEADM_ARGS="--a=1 --container-runtime-endpoint ${SOCK} --b=2"\n`, SOCK)).toBe(
      `KUBELET_KUBEADM_ARGS="--a=1 --container-runtime-endpoint=${SOCK} --b=2"\n`,
    );
  });
  it("round-trips with remove", () => {
    const removed = removeContainerRuntimeEndpointFlag(USER);
    expect(addContainerRuntimeEndpointFlag(removed.text, removed.endpoint!)).toBe(USER);
  });
  it("refuses a bad endpoint", () => expect(() => addContainerRuntimeEndpointFlag(LEGACY, "unix://x y")).toThrow(/criSocket/));
  it("renders kubeadm's file", () => expect(renderKubeadmFlagsEnv(["--a=b", "--c=\"d\""])).toBe('KUBELET_KUBEADM_ARGS="--a=b --c=\\"d\\""\n'));
});
