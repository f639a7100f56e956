/**
 * The kubeadm stand-in (a TEST DOUBLE) writes, per minor, exactly the files and store objects
 * kubeadm-facts.md says kubeadm writes at init and join.
 */
import { initConfig, joinConfig, Lab, LabNode, parseJoin } from "./helpers";

const CONTAINERD = "unix:///var/run/containerd/containerd.sock";
const CRIO = "unix:///var/run/crio/crio.sock";
const ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket";

interface Case {
  version: string;
  gates?: Record<string, boolean>;
  gateOn: boolean;
  pause?: string;
}

const cases: Case[] = [
  { version: "v1.31.4", gateOn: false, pause: "registry.k8s.io/pause:3.10" },
  { version: "v1.32.3", gateOn: false, pause: "registry.k8s.io/pause:3.10" },
  { version: "v1.32.3", gates: { NodeLocalCRISocket: true }, gateOn: true, pause: "registry.k8s.io/pause:3.10" },
  { version: "v1.33.2", gateOn: false, pause: "registry.k8s.io/pause:3.10" },
  { version: "v1.33.2", gates: { NodeLocalCRISocket: true }, gateOn: true, pause: "registry.k8s.io/pause:3.10" },
  { version: "v1.34.1", gateOn: true, pause: "registry.k8s.io/pause:3.10.1" },
  { version: "v1.34.1", gates: { NodeLocalCRISocket: false }, gateOn: false, pause: "registry.k8s.io/pause:3.10.1" },
  { version: "v1.35.0", gateOn: true },
  { version: "v1.35.0", gates: { NodeLocalCRISocket: false }, gateOn: false },
  { version: "v1.36.0", gateOn: true },
  { version: "v1.37.0", gateOn: true },
];

async function initAndJoin(lab: Lab, c: Case): Promise<{ cp: LabNode; w: LabNode }> {
  const cp = await lab.node("cp1", c.version, ["containerd"]);
  const w = await lab.node("w1", c.version, ["crio"]);
  const init = await cp.kubeadm("init", "--config", cp.config("init.yaml", initConfig({ version: c.version, name: "cp1", gates: c.gates, cpe: "10.0.0.1:6443", extraArgs: [{ name: "node-ip", value: "10.0.0.2" }] })));
  expect(init.stderr).toBe("");
  expect(init.code).toBe(0);
  const tc = await cp.kubeadm("token", "create", "--print-join-command");
  expect(tc.code).toBe(0);
  const j = parseJoin(tc.stdout);
  const join = await w.kubeadm("join", "--config", w.config("join.yaml", joinConfig({ name: "w1", ...j })));
  expect(join.stderr).toBe("");
  expect(join.code).toBe(0);
  return { cp, w };
}

describe.each(cases)("init + join on $version gates $gates", (c) => {
  let lab: Lab;
  beforeAll(() => {
    lab = new Lab();
  });
  afterAll(async () => lab.close());

  test("files and store objects match kubeadm-facts.md", async () => {
    const { cp, w } = await initAndJoin(lab, c);
    for (const [node, endpoint, user] of [[cp, CONTAINERD, [{ name: "node-ip", value: "10.0.0.2" }]], [w, CRIO, []]] as const) {
      const own: string[] = [];
      if (!c.gateOn) own.push(`--container-runtime-endpoint=${endpoint}`);
      if (c.pause) own.push(`--pod-infra-container-image=${c.pause}`);
      // kubeadm's own flags sorted, then the user's in order; 1.31 sorts them all by name.
      const all = [...own, ...user.map((a) => `--${a.name}=${a.value}`)];
      const flags = (c.version.startsWith("v1.31.") ? [...all].sort() : all).join(" ");
      expect(node.read("/var/lib/kubelet/kubeadm-flags.env")).toBe(`KUBELET_KUBEADM_ARGS="${flags}"\n`);
      const cfg = node.read("/var/lib/kubelet/config.yaml")!;
      expect(cfg).toContain(c.gateOn ? `containerRuntimeEndpoint: ${endpoint}\n` : `containerRuntimeEndpoint: ""\n`);
      // From 1.32 kubeadm's KubeletConfiguration marshals the empty struct crashLoopBackOff.
      expect(cfg.includes("\ncrashLoopBackOff: {}\n")).toBe(!c.version.startsWith("v1.31."));
      const keys = cfg.split("\n").filter((l) => /^[a-zA-Z]/.test(l)).map((l) => l.split(":")[0]);
      expect(keys).toEqual([...keys].sort());
      if (c.gateOn) {
        expect(node.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${endpoint}"\n`);
        const fs = await import("fs");
        expect(fs.statSync(node.file("/var/lib/kubelet/instance-config.yaml")).mode & 0o777).toBe(0o644);
        expect(fs.statSync(node.file("/var/lib/kubelet")).mode & 0o777).toBe(0o700);
      } else {
        expect(node.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
      }
      expect(node.exists("/etc/kubernetes/kubelet.conf")).toBe(true);
      expect(node.exists("/etc/kubernetes/pki/ca.crt")).toBe(true);
      expect((await node.systemctl("is-active", "kubelet")).stdout).toBe("active\n");
    }
    for (const f of ["admin.conf", "super-admin.conf", "controller-manager.conf", "scheduler.conf", "pki/ca.key", "manifests/kube-apiserver.yaml", "manifests/etcd.yaml"]) {
      expect(cp.exists(`/etc/kubernetes/${f}`)).toBe(true);
      expect(w.exists(`/etc/kubernetes/${f}`)).toBe(false);
    }
    expect(cp.read("/etc/kubernetes/manifests/kube-apiserver.yaml")).toContain(`image: registry.k8s.io/kube-apiserver:${c.version}`);

    const s = lab.store();
    const cc = s.configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration;
    expect(cc).toContain(`kubernetesVersion: ${c.version}\n`);
    expect(cc).toContain("apiVersion: kubeadm.k8s.io/v1beta4\n");
    if (c.gates) expect(cc).toContain(`featureGates:\n  NodeLocalCRISocket: ${c.gates.NodeLocalCRISocket}\n`);
    else expect(cc).not.toContain("featureGates");
    expect(s.configMaps["kube-system/kubeadm-config"].metadata.resourceVersion).toMatch(/^\d+$/);
    expect(s.configMaps["kube-system/kubelet-config"].data.kubelet).toContain(`containerRuntimeEndpoint: ""`);
    const cpNode = s.nodes.cp1;
    const wNode = s.nodes.w1;
    expect(cpNode.metadata.labels["node-role.kubernetes.io/control-plane"]).toBe("");
    expect(wNode.metadata.labels["node-role.kubernetes.io/control-plane"]).toBeUndefined();
    expect(cpNode.spec.taints).toEqual([{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }]);
    expect(wNode.spec.taints).toBeUndefined();
    expect(cpNode.metadata.annotations[ANNOTATION]).toBe(c.gateOn ? undefined : CONTAINERD);
    expect(wNode.metadata.annotations[ANNOTATION]).toBe(c.gateOn ? undefined : CRIO);
    expect(cpNode.status.conditions).toEqual([expect.objectContaining({ type: "Ready", status: "True" })]);
    expect(wNode.status.nodeInfo.kubeletVersion).toBe(c.version);
    const get = await cp.kubectl("get", "nodes");
    expect(get.stdout).toMatch(/^NAME +STATUS +ROLES +AGE +VERSION\ncp1 +Ready +control-plane +\S+ +v1\.\d+\.\d+\nw1 +Ready +<none> +\S+ +v1\.\d+\.\d+\n$/);
  }, 60000);
});

describe("kubeadm's own flags and quoting", () => {
  let lab: Lab;
  beforeAll(() => {
    lab = new Lab();
  });
  afterAll(async () => lab.close());

  test("--hostname-override when the node name is not the hostname, --register-with-taints for tainted workers, Go %q quoting", async () => {
    const cp = await lab.node("host-a", "v1.34.1", ["containerd"]);
    const w = await lab.node("host-b", "v1.34.1", ["containerd"]);
    const hostile = 'a"b\\c $(touch /tmp/x)';
    const init = await cp.kubeadm(
      "init",
      "--config",
      cp.config("i.yaml", initConfig({ version: "v1.34.1", name: "cp-one", extraArgs: [{ name: "node-labels", value: hostile.replace(/\\/g, "\\\\").replace(/"/g, '\\"') }], taints: "  taints: []\n" })),
    );
    expect(init.code).toBe(0);
    expect(cp.read("/var/lib/kubelet/kubeadm-flags.env")).toBe(
      'KUBELET_KUBEADM_ARGS="--hostname-override=cp-one --pod-infra-container-image=registry.k8s.io/pause:3.10.1 --node-labels=a\\"b\\\\c $(touch /tmp/x)"\n',
    );
    expect(lab.store().nodes["cp-one"].spec.taints).toBeUndefined();
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    const cfg = joinConfig({ name: "host-b", ...j }).replace("  name: host-b\n", "  name: host-b\n  taints:\n  - key: dedicated\n    value: db\n    effect: NoSchedule\n");
    expect((await w.kubeadm("join", "--config", w.config("j.yaml", cfg))).code).toBe(0);
    expect(w.read("/var/lib/kubelet/kubeadm-flags.env")).toBe(
      'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10.1 --register-with-taints=dedicated=db:NoSchedule"\n',
    );
    expect(lab.store().nodes["host-b"].spec.taints).toEqual([{ key: "dedicated", value: "db", effect: "NoSchedule" }]);
    expect((await w.systemctl("is-active", "kubelet")).stdout).toBe("active\n");
    const names = await cp.kubectl("get", "nodes", "-o", 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}');
    expect(names.stdout).toBe("cp-one\nhost-b\n");
    const ready = await cp.kubectl("get", "nodes", "-o", 'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}');
    expect(ready.stdout).toBe("True True");
  }, 120000);
});
