/**
 * Bad input fails when the component is constructed (so at preview), with an error naming the node and
 * the field, and no resource is registered.
 */
import { installMocks, registrations, settled } from "../helpers/mocks";
import { clusterArgs, node } from "../helpers/fixtures";
import type { ClusterArgs, NodeArgs } from "../../../components";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: false });
  ({ Cluster } = await import("../../../components"));
});

const base = clusterArgs();
const withNode = (i: number, extra: Partial<NodeArgs>): ClusterArgs => ({
  ...base,
  nodes: base.nodes.map((n, j) => (j === i ? { ...n, ...extra } : n)),
});

const cases: Array<[string, ClusterArgs, RegExp]> = [
  ["no control-plane node", { ...base, nodes: [node("w1", "worker", 1)] }, /nodes.*control-plane/i],
  ["duplicate node names", withNode(4, { name: "w1" }), /node "w1": name: .*duplicate|more than once/i],
  ["duplicate host and port", withNode(4, { host: "10.0.0.4" }), /node "w2": host.*10\.0\.0\.4/],
  ["a name that is not a DNS subdomain", withNode(3, { name: "web_1" }), /nodes\[3\]\.name: "web_1" is not an RFC 1123 DNS subdomain/],
  ["a name with capitals", withNode(3, { name: "Worker-1.Example.com" }), /nodes\[3\]\.name: .*write it in lowercase, "worker-1\.example\.com"/],
  ["a kubelet gate in kubeadm's featureGates", { ...base, featureGates: { GracefulNodeShutdown: true } }, /featureGates\.GracefulNodeShutdown: is not a kubeadm feature gate.*kubeletConfiguration\.featureGates/],
  ["a gate kubeadm 1.36 removed", { ...base, kubernetesVersion: "v1.36.0", featureGates: { ControlPlaneKubeletLocalMode: true } }, /featureGates\.ControlPlaneKubeletLocalMode: was removed from kubeadm in 1\.36/],
  ["a role that is neither", withNode(3, { role: "master" as never }), /node "w1": role: .*master/],
  ["a relative criSocket", withNode(3, { criSocket: "run/containerd.sock" }), /node "w1": criSocket: /],
  ["a tcp:// criSocket", withNode(3, { criSocket: "tcp://10.0.0.1:2375" }), /node "w1": criSocket: /],
  ["an npipe:// criSocket", withNode(3, { criSocket: "npipe:////./pipe/containerd-containerd" }), /node "w1": criSocket: /],
  ["an empty criSocket", withNode(3, { criSocket: "" }), /node "w1": criSocket: /],
  ["a criSocket with shell in it", withNode(3, { criSocket: "/run/$(reboot).sock" }), /node "w1": criSocket: /],
  ["an unsupported version", { ...base, kubernetesVersion: "v1.30.5" }, /kubernetesVersion: .*1\.30/],
  ["a malformed version", { ...base, kubernetesVersion: "latest" }, /kubernetesVersion: /],
  ["the gate on 1.31", { ...base, kubernetesVersion: "1.31.2", featureGates: { NodeLocalCRISocket: true } }, /featureGates\.NodeLocalCRISocket: .*1\.31/],
  ["the gate off on 1.36", { ...base, kubernetesVersion: "1.36.0", featureGates: { NodeLocalCRISocket: false } }, /featureGates\.NodeLocalCRISocket: .*(lock|GA)/i],
  ["kubeletConfiguration.containerRuntimeEndpoint", { ...base, kubeletConfiguration: { containerRuntimeEndpoint: "unix:///x" } }, /kubeletConfiguration\.containerRuntimeEndpoint: .*per node/],
  ["a hostile label value", withNode(3, { labels: { tier: "$(touch /tmp/pwned)" } }), /node "w1": labels\.tier: /],
  ["a label value with a newline", withNode(3, { labels: { tier: "a\nb" } }), /node "w1": labels\.tier: /],
  ["a hostile taint key", withNode(3, { taints: [{ key: "a`id`", effect: "NoSchedule" }] }), /node "w1": taints\[0\]\.key: /],
  ["a bad taint effect", withNode(3, { taints: [{ key: "a", effect: "Never" as never }] }), /node "w1": taints\[0\]\.effect: /],
  ["an extra arg with a newline", withNode(3, { kubeletExtraArgs: [{ name: "node-ip", value: "1.2.3.4\n--x=y" }] }), /node "w1": kubeletExtraArgs\[0\]\.value: /],
  ["an extra arg named with dashes", withNode(3, { kubeletExtraArgs: [{ name: "--v", value: "2" }] }), /node "w1": kubeletExtraArgs\[0\]\.name: /],
  ["the runtime endpoint as an extra arg", withNode(3, { kubeletExtraArgs: [{ name: "container-runtime-endpoint", value: "unix:///x" }] }), /node "w1": kubeletExtraArgs\[0\]/],
  ["two control-plane nodes without an endpoint", { ...base, controlPlaneEndpoint: undefined }, /controlPlaneEndpoint: /],
  ["maxConcurrentJoins 0", { ...base, maxConcurrentJoins: 0 }, /maxConcurrentJoins: /],
  ["a bad join token lifetime", { ...base, joinTokenTtl: "forever" }, /joinTokenTtl: /],
  ["a negative kubelet settle time", { ...base, kubeletSettleSeconds: -1 }, /kubeletSettleSeconds: /],
];

test.each(cases)("%s", async (_what, args, message) => {
  registrations.splice(0);
  expect(() => new Cluster("c", args)).toThrow(message);
  await settled();
  expect(registrations.filter((r) => r.type === "command:remote:Command")).toEqual([]);
});
