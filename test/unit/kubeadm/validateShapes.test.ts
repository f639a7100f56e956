/**
 * validateCluster on what stack config (`requireObject`, arbitrary JSON) can hand it: every bad shape
 * is refused with a KubeadmConfigError naming node and field, never a TypeError, never accepted.
 * Cases from the reviewer's test/unit/breaker/validation-shapes.test.ts and kubeadm-layer.test.ts.
 */
import { caught } from "./helpers";
import { validateCluster } from "../../../components/kubeadm/validate";
import { ClusterSpec, KubeadmConfigError } from "../../../components/kubeadm/types";

const ED25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl";
const node = (o: Record<string, unknown> = {}) => ({ name: "w1", role: "worker", host: "10.0.0.2", ...o });
const spec = (over: Record<string, unknown> = {}, nodes: unknown[] = [node()]): ClusterSpec =>
  ({
    kubernetesVersion: "v1.34.2",
    nodes: [{ name: "cp1", role: "control-plane", host: "10.0.0.1" }, ...nodes],
    ...over,
  }) as ClusterSpec;

function refused(s: ClusterSpec): KubeadmConfigError {
  const e = caught(() => validateCluster(s));
  expect(e).toBeInstanceOf(KubeadmConfigError);
  return e as KubeadmConfigError;
}

describe("node entries and connection fields", () => {
  const cases: Array<[string, unknown[], string, RegExp]> = [
    ["a null entry in nodes", [node(), null], "nodes[2]", /must be a map/],
    ["a number entry in nodes", [7], "nodes[1]", /must be a map/],
    ["proxy: null", [node({ proxy: null })], "proxy", /not a map/],
    ["proxy as a string", [node({ proxy: "bastion.example.com" })], "proxy", /not a map/],
    ["proxy without a host", [node({ proxy: { port: 22 } })], "proxy.host", /required/],
    ["proxy port as a string", [node({ proxy: { host: "b", port: "2222" } })], "proxy.port", /TCP port/],
    ["proxy port 2.5", [node({ proxy: { host: "b", port: 2.5 } })], "proxy.port", /TCP port/],
    ["proxy user with a space", [node({ proxy: { host: "b", user: "a b" } })], "proxy.user", /whitespace/],
    ["proxy hostKey garbage", [node({ proxy: { host: "b", hostKey: "nope" } })], "proxy.hostKey", /<type> <base64>/],
    ["proxy host as an option", [node({ proxy: { host: "-oProxyCommand=x" } })], "proxy.host", /option/],
    ["a misspelt proxy field", [node({ proxy: { host: "b", hostkey: ED25519 } })], "proxy.hostkey", /unknown field/],
    ["user as a number", [node({ user: 1000 })], "user", /not a user name/],
    ["user empty", [node({ user: "" })], "user", /not a user name/],
    ["user starting with -", [node({ user: "-oX" })], "user", /starts with/],
    ["user with a newline", [node({ user: "root\nx" })], "user", /whitespace or control/],
    ["hostKey as a number", [node({ hostKey: 42 })], "hostKey", /<type> <base64>/],
    ["hostKey null (unpinned, and no warning)", [node({ hostKey: null })], "hostKey", /null/],
    ["hostKey of two lines", [node({ hostKey: `${ED25519}\n${ED25519}` })], "hostKey", /one line/],
    ["hostKey whose data is another type", [node({ hostKey: ED25519.replace("ssh-ed25519", "ssh-rsa") })], "hostKey", /not a ssh-rsa/],
    ["a host an ssh client reads as an option", [node({ host: "-oProxyCommand=/tmp/x" })], "host", /option/],
    ["a host with a port in it", [node({ host: "10.0.0.1:22" })], "host", /port in port/],
    ["a bracketed IPv6 host", [node({ host: "[fe80::1]" })], "host", /without brackets/],
    ["a host with a space", [node({ host: "a b" })], "host", /whitespace/],
    ["a host that is empty", [node({ host: "" })], "host", /non-empty/],
    ["a host that is a number", [node({ host: 10 })], "host", /non-empty string/],
    ["a host with user@", [node({ host: "root@10.0.0.2" })], "host", /not a host name/],
    ["no host at all", [node({ host: undefined, hostGiven: false })], "host", /required/],
    ["port as a string", [node({ port: "22" })], "port", /TCP port/],
    ["port 0", [node({ port: 0 })], "port", /TCP port/],
    ["port NaN", [node({ port: NaN })], "port", /NaN is not a TCP port/],
    ["port 65536", [node({ port: 65536 })], "port", /TCP port/],
    ["kubeadmInstallCommand as a list", [node({ kubeadmInstallCommand: ["apt-get"] })], "kubeadmInstallCommand", /not a command/],
  ];
  test.each(cases)("%s is refused naming the field", (_what, nodes, field, re) => {
    const e = refused(spec({}, nodes));
    expect(e.field).toBe(field);
    expect(e.message).toMatch(re);
    if (!field.startsWith("nodes[")) expect(e.node).toBe("w1");
  });

  it("accepts plain good connection fields, bare IPv6 hosts, and leaves Outputs to run time", () => {
    class FakeOutput {}
    expect(() =>
      validateCluster(
        spec({}, [
          node({ user: "ubuntu", port: 2222, hostKey: ED25519, proxy: { host: "bastion.example.com", port: 22, user: "jump", hostKey: `${ED25519} me@laptop\n` } }),
          node({ name: "w2", host: "fe80::2", hostKey: new FakeOutput(), user: new FakeOutput(), proxy: { host: new FakeOutput() } }),
          node({ name: "w3", host: undefined, hostGiven: true }),
        ]),
      ),
    ).not.toThrow();
  });

  it("a bare IPv6 host and the same address with a different port are different endpoints; the same one is a duplicate", () => {
    expect(() => validateCluster(spec({}, [node({ host: "fd00::2" }), node({ name: "w2", host: "fd00::2", port: 2222 })]))).not.toThrow();
    expect(refused(spec({}, [node({ host: "fd00::2" }), node({ name: "w2", host: "FD00::2" })])).message).toMatch(/same host and port/);
  });
});

describe("cluster-wide numbers, durations and commands", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["drainTimeoutSeconds NaN", { drainTimeoutSeconds: NaN }, "drainTimeoutSeconds"],
    ["drainTimeoutSeconds negative", { drainTimeoutSeconds: -5 }, "drainTimeoutSeconds"],
    ["drainTimeoutSeconds as a string with shell", { drainTimeoutSeconds: "1 ; touch /tmp/pwned ;" }, "drainTimeoutSeconds"],
    ["drainGracePeriodSeconds 1.5", { drainGracePeriodSeconds: 1.5 }, "drainGracePeriodSeconds"],
    ["drainGracePeriodSeconds Infinity", { drainGracePeriodSeconds: Infinity }, "drainGracePeriodSeconds"],
    ["maxConcurrentJoins 0", { maxConcurrentJoins: 0 }, "maxConcurrentJoins"],
    ["maxConcurrentJoins as a string", { maxConcurrentJoins: "10" }, "maxConcurrentJoins"],
    ["maxUnavailableWorkers 0", { maxUnavailableWorkers: 0 }, "maxUnavailableWorkers"],
    ["kubeletSettleSeconds -1", { kubeletSettleSeconds: -1 }, "kubeletSettleSeconds"],
    ["kubeletSettleSeconds null", { kubeletSettleSeconds: null }, "kubeletSettleSeconds"],
    ["joinTokenTtl forever", { joinTokenTtl: "forever" }, "joinTokenTtl"],
    ["joinTokenTtl zero", { joinTokenTtl: "0h0m0s" }, "joinTokenTtl"],
    ["joinTokenTtl empty", { joinTokenTtl: "" }, "joinTokenTtl"],
    ["joinTokenTtl as a number", { joinTokenTtl: 7200 }, "joinTokenTtl"],
    ["joinTokenTtl with shell", { joinTokenTtl: "2h; reboot" }, "joinTokenTtl"],
    ["kubeletInstallCommand as a number", { kubeletInstallCommand: 1 }, "kubeletInstallCommand"],
    ["kubeadmInstallCommand blank", { kubeadmInstallCommand: "  " }, "kubeadmInstallCommand"],
    ["nodes as a map", { nodes: { cp1: {} } }, "nodes"],
  ];
  test.each(cases)("%s is refused naming the field", (_what, over, field) => {
    const e = refused(spec(over));
    expect(e.field).toBe(field);
    expect(e.node).toBeUndefined();
  });

  it("a bad joinTokenTtl is refused even when there is nothing to join (one node)", () => {
    const e = refused({ kubernetesVersion: "v1.34.2", nodes: [{ name: "cp1", role: "control-plane" }], joinTokenTtl: "forever" } as ClusterSpec);
    expect(e.field).toBe("joinTokenTtl");
  });

  it("accepts good values at their limits", () => {
    expect(() =>
      validateCluster(
        spec({
          drainTimeoutSeconds: 0,
          drainGracePeriodSeconds: 0,
          maxConcurrentJoins: 1,
          maxUnavailableWorkers: 3,
          kubeletSettleSeconds: 0,
          joinTokenTtl: "0h0m1s",
          kubeadmInstallCommand: "apt-get install -y kubeadm={{version}}",
        }),
      ),
    ).not.toThrow();
    for (const ttl of ["2h0m0s", "24h", "90m", "30s", "1h30m"]) expect(() => validateCluster(spec({ joinTokenTtl: ttl }))).not.toThrow();
  });
});

describe("gates and controlPlaneEndpoint as kubeadm sees them", () => {
  it("a gate that differs from NodeLocalCRISocket only in case is refused with a hint", () => {
    const e = refused(spec({ kubernetesVersion: "v1.33.2", featureGates: { NodeLocalCriSocket: true } }));
    expect(e.field).toBe("featureGates.NodeLocalCriSocket");
    expect(e.message).toMatch(/did you mean NodeLocalCRISocket\?/);
  });

  it("a gate kubeadm might know under another case is refused too", () => {
    expect(refused(spec({ featureGates: { etcdLearnerMode: true } })).message).toMatch(/did you mean EtcdLearnerMode/);
  });

  // kubeadm's ValidateFeatureGates checks names against its own InitFeatureGates: anything else fails
  // `kubeadm init` ("X is not a valid feature name."). Refused here, at preview, naming the gate.
  it("a kubelet or API server gate is refused, naming it and pointing to kubeletConfiguration.featureGates", () => {
    const e = refused(spec({ kubernetesVersion: "v1.34.2", featureGates: { NodeLocalCRISocket: true, GracefulNodeShutdown: true } }));
    expect(e.field).toBe("featureGates.GracefulNodeShutdown");
    expect(e.node).toBeUndefined();
    expect(e.message).toBe(
      'featureGates.GracefulNodeShutdown: is not a kubeadm feature gate; kubeadm v1.34.2 would refuse it ("GracefulNodeShutdown is not a valid feature name."). ' +
        "kubeadm's own gates on v1.34.2: ControlPlaneKubeletLocalMode, NodeLocalCRISocket, RootlessControlPlane, WaitForAllControlPlaneComponents. " +
        "A kubelet feature gate goes in kubeletConfiguration.featureGates (for example {featureGates: {GracefulNodeShutdown: true}})",
    );
    expect(validateCluster(spec({ kubeletConfiguration: { featureGates: { GracefulNodeShutdown: true } } })).kubeletConfiguration).toEqual({
      featureGates: { GracefulNodeShutdown: true },
    });
  });

  it.each([
    ["v1.36.0", "ControlPlaneKubeletLocalMode", /was removed from kubeadm in 1\.36/],
    ["v1.33.2", "EtcdLearnerMode", /was removed from kubeadm in 1\.33/],
    ["v1.35.0", "WaitForAllControlPlaneComponents", /was removed from kubeadm in 1\.35/],
    ["v1.34.2", "PublicKeysECDSA", /deprecated in kubeadm since 1\.30/],
  ])("%s refuses %s", (version, gate, why) => {
    const e = refused(spec({ kubernetesVersion: version, featureGates: { [gate]: true } }));
    expect(e.field).toBe(`featureGates.${gate}`);
    expect(e.message).toMatch(why);
    expect(e.message).toContain(`("${gate} is not a valid feature name.")`);
  });

  it.each([
    ["v1.35.0", "ControlPlaneKubeletLocalMode"],
    ["v1.32.3", "EtcdLearnerMode"],
    ["v1.34.2", "WaitForAllControlPlaneComponents"],
    ["v1.37.0", "RootlessControlPlane"],
  ])("%s accepts %s and hands it to kubeadm", (version, gate) => {
    expect(validateCluster(spec({ kubernetesVersion: version, featureGates: { [gate]: false } })).kubeadmFeatureGates).toEqual({ [gate]: false });
  });

  // kubeadm: ValidateHostPort -> ParseHostPort -> validation.IsDNS1123Subdomain(host), no lower-casing
  // (cmd/kubeadm/app/util/endpoint.go), so kubeadm init refuses capitals: refuse them here, with a hint.
  it("controlPlaneEndpoint with capitals is refused as kubeadm does, with the lower-case spelling as a hint", () => {
    const e = refused(spec({ controlPlaneEndpoint: "K8S.Example.com:6443" }));
    expect(e.field).toBe("controlPlaneEndpoint");
    expect(e.message).toMatch(/refuses capitals; write "k8s\.example\.com:6443"/);
  });

  it("controlPlaneEndpoint: a bare IPv6 address and [IPv6]:port are accepted, [IPv6] without a port is refused (as kubeadm)", () => {
    expect(() => validateCluster(spec({ controlPlaneEndpoint: "fd00::10" }))).not.toThrow();
    expect(() => validateCluster(spec({ controlPlaneEndpoint: "[fd00::10]:6443" }))).not.toThrow();
    expect(refused(spec({ controlPlaneEndpoint: "[fd00::10]" })).field).toBe("controlPlaneEndpoint");
  });
});
