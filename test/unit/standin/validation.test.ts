/** The kubeadm stand-in (a TEST DOUBLE) refuses what kubeadm refuses, with kubeadm's messages. */
import { initConfig, joinConfig, Lab, parseJoin } from "./helpers";

let labs: Lab[] = [];
async function lab(): Promise<Lab> {
  const l = new Lab();
  labs.push(l);
  return l;
}
afterAll(async () => {
  await Promise.all(labs.map((l) => l.close()));
  labs = [];
});

async function initWith(version: string, opts: Parameters<typeof initConfig>[0] extends infer T ? Partial<T> : never, runtimes = ["containerd"]) {
  const l = await lab();
  const cp = await l.node("cp1", version, runtimes);
  const r = await cp.kubeadm("init", "--config", cp.config("init.yaml", initConfig({ version, name: "cp1", ...opts })));
  return { l, cp, r };
}

describe("feature gate validation", () => {
  test("1.31 rejects a config naming NodeLocalCRISocket", async () => {
    const { cp, r } = await initWith("v1.31.4", { gates: { NodeLocalCRISocket: true } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("NodeLocalCRISocket is not a valid feature name.");
    expect(r.stderr).toContain('featureGates: Invalid value: map[string]bool{"NodeLocalCRISocket":true}');
    expect(cp.exists("/etc/kubernetes/manifests")).toBe(false);
    expect(cp.exists("/var/lib/kubelet/kubeadm-flags.env")).toBe(false);
  });
  test("the whole map prints as a Go map up to 1.33 (exit 3) and as JSON from 1.34 (exit 1)", async () => {
    const a = await initWith("v1.33.2", { gates: { NoSuchGate: true, RootlessControlPlane: false } });
    expect(a.r.code).toBe(3); // a validation error: kubeadm up to 1.33 exits 3

    expect(a.r.stderr).toBe(
      'featureGates: Invalid value: map[string]bool{"NoSuchGate":true, "RootlessControlPlane":false}: NoSuchGate is not a valid feature name.\nTo see the stack trace of this error execute with --v=5 or higher\n',
    );
    const b = await initWith("v1.34.1", { gates: { NoSuchGate: true, RootlessControlPlane: false } });
    expect(b.r.code).toBe(1);
    expect(b.r.stderr).toBe(
      'error: featureGates: Invalid value: {"NoSuchGate":true,"RootlessControlPlane":false}: NoSuchGate is not a valid feature name.\nTo see the stack trace of this error execute with --v=5 or higher\n',
    );
  });
  test("ControlPlaneKubeletLocalMode: GA on 1.35, removed on 1.36", async () => {
    expect((await initWith("v1.35.0", { gates: { ControlPlaneKubeletLocalMode: true } })).r.code).toBe(0);
    const r = await initWith("v1.36.0", { gates: { ControlPlaneKubeletLocalMode: true } });
    expect(r.r.code).toBe(1);
    expect(r.r.stderr).toContain('featureGates: Invalid value: {"ControlPlaneKubeletLocalMode":true}: ControlPlaneKubeletLocalMode is not a valid feature name.');
  });
  test("1.36 takes NodeLocalCRISocket=false (kubeadm checks names only) and writes the legacy files", async () => {
    const { cp, r } = await initWith("v1.36.0", { gates: { NodeLocalCRISocket: false } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(cp.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
    expect(cp.read("/var/lib/kubelet/kubeadm-flags.env")).toBe('KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock"\n');
  });
  test("1.37 rejects the removed gate", async () => {
    const { r } = await initWith("v1.37.0", { gates: { NodeLocalCRISocket: true } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("NodeLocalCRISocket is not a valid feature name.");
  });
});

describe("CRI socket", () => {
  test("no scheme: unix:// prepended with kubeadm's deprecation warning", async () => {
    const { cp, r } = await initWith("v1.31.4", { criSocket: "/run/containerd/containerd.sock" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. Automatically prepending scheme "unix" to the "criSocket" with value "/run/containerd/containerd.sock". Please update your configuration!',
    );
    expect(cp.read("/var/lib/kubelet/kubeadm-flags.env")).toContain("--container-runtime-endpoint=unix:///run/containerd/containerd.sock ");
  });
  test("several sockets and a gate kubeadm does not know: the socket error comes first (defaulting before validation)", async () => {
    const { r } = await initWith("v1.37.0", { gates: { NodeLocalCRISocket: true } }, ["containerd", "crio"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: found multiple CRI endpoints on the host\./);
    expect(r.stderr).not.toContain("featureGates");
  });
  test("several sockets and none chosen: kubeadm's error, nothing written", async () => {
    const { cp, r } = await initWith("v1.34.1", {}, ["containerd", "crio"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field in the kubeadm configuration file: unix:///var/run/containerd/containerd.sock, unix:///var/run/crio/crio.sock",
    );
    expect(cp.exists("/var/lib/kubelet")).toBe(false);
  });
  test("detects the only socket", async () => {
    const { cp, r } = await initWith("v1.34.1", {}, ["cri-dockerd"]);
    expect(r.code).toBe(0);
    expect(cp.read("/var/lib/kubelet/instance-config.yaml")).toBe('containerRuntimeEndpoint: "unix:///var/run/cri-dockerd.sock"\n');
  });
  test("preflight fails when the chosen socket does not exist", async () => {
    const { r } = await initWith("v1.33.2", { criSocket: "unix:///var/run/crio/crio.sock" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error execution phase preflight: [preflight] Some fatal errors occurred:\n\t[ERROR CRI]: ");
    expect(r.stderr).toContain("dial unix /var/run/crio/crio.sock");
  });
});

describe("versions and repeated runs", () => {
  test("kubernetesVersion of another minor or newer than kubeadm is refused", async () => {
    const a = await initWith("v1.33.2", { version: "v1.34.0" });
    expect(a.r.code).toBe(1);
    expect(a.r.stderr).toContain("Current version: v1.34.0");
    const b = await initWith("v1.33.2", { version: "v1.33.5" });
    expect(b.r.code).toBe(1);
  });
  test("kubeadm version -o short", async () => {
    const l = await lab();
    const n = await l.node("n", "v1.35.1");
    expect(await n.kubeadm("version", "-o", "short")).toEqual({ code: 0, stdout: "v1.35.1\n", stderr: "" });
  });
  test("init twice fails preflight with kubeadm's already-exists errors", async () => {
    const { cp, r } = await initWith("v1.33.2", {});
    expect(r.code).toBe(0);
    const again = await cp.kubeadm("init", "--config", cp.config("init.yaml", initConfig({ version: "v1.33.2", name: "cp1" })));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("[ERROR FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml]: /etc/kubernetes/manifests/kube-apiserver.yaml already exists");
    expect(again.stderr).toContain("[ERROR DirAvailable--var-lib-etcd]: /var/lib/etcd is not empty");
  });
});

describe("join", () => {
  test("tokens expire, CA hashes are checked, joining twice is refused", async () => {
    const l = await lab();
    l.setConfig({ tokenTtlSeconds: 600 });
    const cp = await l.node("cp1", "v1.33.2");
    const w = await l.node("w1", "v1.33.2");
    expect((await cp.kubeadm("init", "--config", cp.config("i.yaml", initConfig({ version: "v1.33.2", name: "cp1" })))).code).toBe(0);
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    const longLived = parseJoin((await cp.kubeadm("token", "create", "--ttl", "1h", "--print-join-command")).stdout);
    const badHash = await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...j, hash: `sha256:${"0".repeat(64)}` })));
    expect(badHash.code).toBe(1);
    expect(badHash.stderr).toContain(`cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "${j.hash}" are pinned`);
    // The lab's clock 20 minutes on: the 10-minute token expired, the 1-hour one did not.
    l.setConfig({ tokenTtlSeconds: 600, clockOffsetSeconds: 1200 });
    const expired = await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...j })));
    expect(expired.code).toBe(1);
    expect(expired.stderr).toContain(`error execution phase preflight: couldn't validate the identity of the API Server: could not find a JWS signature in the cluster-info ConfigMap for token ID "${j.token.split(".")[0]}"`);
    expect(w.exists("/etc/kubernetes/kubelet.conf")).toBe(false);
    const ok = await w.kubeadm(...`join ${longLived.endpoint} --token ${longLived.token} --discovery-token-ca-cert-hash ${longLived.hash}`.split(" "));
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const twice = await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...longLived })));
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf already exists");
  }, 120_000);

  test("control-plane join needs a controlPlaneEndpoint", async () => {
    const l = await lab();
    const cp = await l.node("cp1", "v1.34.1");
    const cp2 = await l.node("cp2", "v1.34.1");
    expect((await cp.kubeadm("init", "--upload-certs", "--config", cp.config("i.yaml", initConfig({ version: "v1.34.1", name: "cp1" })))).code).toBe(0);
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    const key = (await cp.kubeadm("init", "phase", "upload-certs", "--upload-certs")).stdout.trim().split("\n").pop()!;
    const r = await cp2.kubeadm("join", "--config", cp2.config("j.yaml", joinConfig({ name: "cp2", ...j, certificateKey: key })));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unable to add a new control plane instance to a cluster that doesn't have a stable controlPlaneEndpoint address");
  });

  test("control-plane join: certificate key must exist, match and be unexpired", async () => {
    const l = await lab();
    l.setConfig({ certificateKeyTtlSeconds: 600 });
    const cp = await l.node("cp1", "v1.34.1");
    const cp2 = await l.node("cp2", "v1.34.1");
    const cp3 = await l.node("cp3", "v1.34.1");
    expect((await cp.kubeadm("init", "--config", cp.config("i.yaml", initConfig({ version: "v1.34.1", name: "cp1", cpe: "10.0.0.1:6443" })))).code).toBe(0);
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    const none = await cp2.kubeadm("join", "--config", cp2.config("j.yaml", joinConfig({ name: "cp2", ...j, certificateKey: "a".repeat(64) })));
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'Secret "kubeadm-certs" was not found in the "kube-system" Namespace. This Secret might have expired. Please, run `kubeadm init phase upload-certs --upload-certs` on a control plane to generate a new one',
    );
    const up = await cp.kubeadm("init", "phase", "upload-certs", "--upload-certs");
    expect(up.stdout).toMatch(/^\[upload-certs\] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace\n\[upload-certs\] Using certificate key:\n[0-9a-f]{64}\n$/);
    const key = up.stdout.trim().split("\n").pop()!;
    const wrong = await cp2.kubeadm("join", "--config", cp2.config("j.yaml", joinConfig({ name: "cp2", ...j, certificateKey: "b".repeat(64) })));
    expect(wrong.code).toBe(1);
    const ok = await cp2.kubeadm("join", "--config", cp2.config("j.yaml", joinConfig({ name: "cp2", ...j, certificateKey: key })));
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(cp2.exists("/etc/kubernetes/admin.conf")).toBe(true);
    expect(cp2.exists("/etc/kubernetes/manifests/kube-apiserver.yaml")).toBe(true);
    expect(cp2.exists("/etc/kubernetes/super-admin.conf")).toBe(false);
    expect(l.store().nodes.cp2.spec.taints).toEqual([{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }]);
    // The lab's clock 20 minutes on: the 10-minute certificate key expired.
    l.setConfig({ certificateKeyTtlSeconds: 600, clockOffsetSeconds: 1200 });
    const late = await cp3.kubeadm("join", "--config", cp3.config("j.yaml", joinConfig({ name: "cp3", ...j, certificateKey: key })));
    expect(late.code).toBe(1);
    expect(late.stderr).toContain('Secret "kubeadm-certs" was not found');
  }, 120_000);
});

describe("boolean flags, read as kubeadm's flag library (pflag) reads them", () => {
  // Fails on 4533d07: only a bare flag counted, so --print-join-command=True printed the bare token and
  // --force=1 asked for a confirmation (and, with none on stdin, aborted the reset).
  test("=True, =1 and =0 as Go's strconv.ParseBool reads them; =yes fails with pflag's message, changing nothing", async () => {
    const { l, cp, r } = await initWith("v1.34.1", {});
    expect(r.code).toBe(0);
    expect((await cp.kubeadm("token", "create", "--print-join-command=True")).stdout).toMatch(/^kubeadm join \S+ --token [a-z0-9]{6}\.[a-z0-9]{16} /);
    expect((await cp.kubeadm("token", "create", "--print-join-command=0")).stdout).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}\n$/);
    const before = l.store().tokens.length;
    const bad = await cp.kubeadm("token", "create", "--print-join-command=yes");
    expect(l.store().tokens.length).toBe(before);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error: invalid argument "yes" for "--print-join-command" flag: strconv.ParseBool: parsing "yes": invalid syntax\n');
    // Go's %q quotes the value.
    expect((await cp.kubeadm("token", "create", '--print-join-command=x"y')).stderr).toContain('error: invalid argument "x\\"y" for "--print-join-command" flag: strconv.ParseBool: parsing "x\\"y": invalid syntax\n');
    // The phase uploads with =true (and only then prints the key), refuses a bad value.
    expect((await cp.kubeadm("init", "phase", "upload-certs", "--upload-certs=true")).stdout).toMatch(/\[upload-certs\] Using certificate key:\n[0-9a-f]{64}\n$/);
    expect((await cp.kubeadm("init", "phase", "upload-certs", "--upload-certs=bogus")).code).toBe(1);
    // A shorthand and its long name are one flag: the last wins, the first bad value fails, -fy is -f -y.
    const badReset = await cp.kubeadm("reset", "--force=yes");
    expect(badReset.code).toBe(1);
    expect(badReset.stderr).toContain('error: invalid argument "yes" for "-f, --force" flag: strconv.ParseBool: parsing "yes": invalid syntax\n');
    expect(cp.exists("/etc/kubernetes/admin.conf")).toBe(true);
    expect((await cp.kubeadm("reset", "-f=bogus", "--force")).stderr).toContain('invalid argument "bogus" for "-f, --force" flag');
    expect(cp.exists("/etc/kubernetes/admin.conf")).toBe(true);
    const reset = await cp.kubeadm("reset", "--force=false", "-f");
    expect(reset.code).toBe(0);
    expect(cp.exists("/etc/kubernetes/admin.conf")).toBe(false);
  });
});

// Fails on 4533d07, which ran a real init for --dry-run (and printed the token despite --skip-token-print).
test("kubeadm init refuses the flags this stand-in cannot honour, before anything runs", async () => {
  const l = await lab();
  const cp = await l.node("cp1", "v1.34.1", ["containerd"]);
  for (const f of ["--dry-run", "--skip-token-print"]) {
    const r = await cp.kubeadm("init", f, "--node-name", "cp1");
    expect(r).toMatchObject({ code: 1, stderr: `this lab stand-in's kubeadm init does not support ${f}\n` });
  }
  expect(cp.exists("/etc/kubernetes/manifests")).toBe(false);
  expect(cp.exists("/var/lib/kubelet/config.yaml")).toBe(false);
});
