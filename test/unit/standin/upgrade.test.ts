/**
 * `kubeadm upgrade` of the stand-in (a TEST DOUBLE): version policy and, per minor, what happens to
 * instance-config.yaml, the --container-runtime-endpoint flag and the cri-socket annotation
 * (kubeadm-facts.md).
 */
import { initConfig, joinConfig, Lab, LabNode, parseJoin } from "./helpers";

const CONTAINERD = "unix:///var/run/containerd/containerd.sock";
const CRIO = "unix:///var/run/crio/crio.sock";
const ANNOTATION = "kubeadm.alpha.kubernetes.io/cri-socket";

let labs: Lab[] = [];
afterAll(async () => {
  await Promise.all(labs.map((l) => l.close()));
  labs = [];
});

async function cluster(version: string, gates?: Record<string, boolean>): Promise<{ lab: Lab; cp: LabNode; w: LabNode }> {
  const lab = new Lab();
  labs.push(lab);
  const cp = await lab.node("cp1", version, ["containerd"]);
  const w = await lab.node("w1", version, ["crio"]);
  const init = await cp.kubeadm("init", "--config", cp.config("i.yaml", initConfig({ version, name: "cp1", gates, cpe: "10.0.0.1:6443" })));
  expect(init.code).toBe(0);
  const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
  expect((await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...j, criSocket: CRIO })))).code).toBe(0);
  return { lab, cp, w };
}

/** Install step + apply on cp1 + node on w1 + kubelet restarts; returns kubelet states. */
async function upgrade(cp: LabNode, w: LabNode, version: string): Promise<void> {
  cp.setVersion(version);
  w.setVersion(version);
  const a = await cp.kubeadm("upgrade", "apply", version, "-y");
  expect(a.stderr).toBe("");
  expect(a.code).toBe(0);
  const n = await w.kubeadm("upgrade", "node");
  expect(n.stderr).toBe("");
  expect(n.code).toBe(0);
  for (const x of [cp, w]) {
    expect((await x.systemctl("restart", "kubelet")).code).toBe(0);
    expect((await x.systemctl("is-active", "kubelet")).stdout).toBe("active\n");
  }
}

function flags(n: LabNode): string {
  return n.read("/var/lib/kubelet/kubeadm-flags.env")!;
}

async function setGates(cp: LabNode, edit: (cc: string) => string): Promise<void> {
  const got = await cp.kubectl("get", "configmap", "-n", "kube-system", "kubeadm-config", "-o", "json");
  const cm = JSON.parse(got.stdout) as { data: { ClusterConfiguration: string } };
  cm.data.ClusterConfiguration = edit(cm.data.ClusterConfiguration);
  const r = await cp.run("kubectl", ["--kubeconfig", "/etc/kubernetes/admin.conf", "replace", "-f", "-"], JSON.stringify(cm));
  expect(r.stderr).toBe("");
  expect(r.stdout).toBe("configmap/kubeadm-config replaced\n");
}

test("1.31 -> 1.32 (off) -> gate on 1.32 -> 1.33 ... 1.37: a file 1.32 made keeps the flag until 1.37 strips it", async () => {
  const { lab, cp, w } = await cluster("v1.31.4");
  const annotations = (): [string | undefined, string | undefined] => [lab.store().nodes.cp1.metadata.annotations[ANNOTATION], lab.store().nodes.w1.metadata.annotations[ANNOTATION]];

  await upgrade(cp, w, "v1.32.3");
  expect(annotations()).toEqual([CONTAINERD, CRIO]);
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO} --pod-infra-container-image=registry.k8s.io/pause:3.10"\n`);
  expect(w.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
  expect(w.read("/var/lib/kubelet/config.yaml")).toContain('containerRuntimeEndpoint: ""\n');
  expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).toContain("kubernetesVersion: v1.32.3\n");
  expect(cp.read("/etc/kubernetes/manifests/kube-apiserver.yaml")).toContain("kube-apiserver:v1.32.3");

  // Turn the gate on as the kinder test does: edit the ConfigMap, then upgrade (1.32 keeps the flag).
  await setGates(cp, (cc) => `${cc}featureGates:\n  NodeLocalCRISocket: true\n`);
  await upgrade(cp, w, "v1.32.4");
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);
  expect(cp.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  expect(flags(w)).toContain(`--container-runtime-endpoint=${CRIO}`);
  expect(annotations()).toEqual([CONTAINERD, CRIO]);
  expect(w.read("/var/lib/kubelet/config.yaml")).toContain(`containerRuntimeEndpoint: ${CRIO}\n`);

  // 1.33-1.36 remove the flag only when they create instance-config.yaml: 1.32 made it, so it stays.
  await upgrade(cp, w, "v1.33.2");
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO} --pod-infra-container-image=registry.k8s.io/pause:3.10"\n`);
  expect(annotations()).toEqual([undefined, undefined]);
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);

  await upgrade(cp, w, "v1.34.1");
  await upgrade(cp, w, "v1.35.0");
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO}"\n`);
  expect(flags(cp)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CONTAINERD}"\n`);
  await upgrade(cp, w, "v1.36.0");
  expect(annotations()).toEqual([undefined, undefined]);
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO}"\n`);

  // 1.37 does not know the gate still in the ConfigMap: upgrade apply prints it and goes on (checked in
  // kubeadm's source; the facts file says it fails), and keeps it in the ConfigMap.
  const before = lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration;
  cp.setVersion("v1.37.0");
  w.setVersion("v1.37.0");
  const a = await cp.kubeadm("upgrade", "apply", "v1.37.0", "-y");
  expect(a.stderr).toBe("");
  expect(a.code).toBe(0);
  expect(a.stdout).toContain("[upgrade/preflight] Unknown feature gate flag: NodeLocalCRISocket\n");
  expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).toBe(before.replace("kubernetesVersion: v1.36.0", "kubernetesVersion: v1.37.0"));
  const n = await w.kubeadm("upgrade", "node");
  expect(n.stderr).toBe("");
  expect(n.stdout).not.toContain("Unknown feature gate flag");
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);
  // 1.37 strips nothing from kubeadm-flags.env (its post-upgrade list is empty): the flag 1.32 left stays.
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO}"\n`);
  expect(flags(cp)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CONTAINERD}"\n`);
}, 120000);

test("1.33 (gate off) -> 1.34 turns the default-on gate on from the flag (not the annotation), which goes", async () => {
  const { lab, cp, w } = await cluster("v1.33.2");
  expect(flags(w)).toContain(`--container-runtime-endpoint=${CRIO}`);
  // A stale annotation (a runtime switch): 1.34 reads it first to find the socket, but builds the file from the flag.
  await lab.hostKubectl("annotate", "node", "w1", `${ANNOTATION}=${CONTAINERD}`, "--overwrite");
  await upgrade(cp, w, "v1.34.1");
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n`);
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBeUndefined();
  expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).not.toContain("featureGates");
}, 60000);

describe("kubelet-config phase, 1.33 with the gate on (kubeadm upgrade node on the worker)", () => {
  let lab: Lab;
  let w: LabNode;
  beforeAll(async () => {
    ({ lab, w } = await cluster("v1.33.2", { NodeLocalCRISocket: true }));
  }, 120000);
  /** Set the files, annotate (1.33 finds a node without instance config by the annotation; upgrade removes it), upgrade. */
  const upgradeNode = async (files: { instance?: string; flags?: string }, annotation = CRIO) => {
    await lab.hostKubectl("annotate", "node", "w1", `${ANNOTATION}=${annotation}`, "--overwrite");
    const fs = await import("fs");
    for (const [path, content] of [["/var/lib/kubelet/instance-config.yaml", files.instance], ["/var/lib/kubelet/kubeadm-flags.env", files.flags]] as const) {
      fs.rmSync(w.file(path), { force: true });
      if (content !== undefined) w.write(path, content);
    }
    return w.kubeadm("upgrade", "node");
  };

  test("an existing instance-config.yaml is never rewritten, even stale, and the flag stays", async () => {
    const flagsText = `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO} --v=2 --node-ip=10.0.0.9"\n`;
    const r = await upgradeNode({ instance: `containerRuntimeEndpoint: "${CONTAINERD}"\n`, flags: flagsText });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
    expect(flags(w)).toBe(flagsText);
    // config.yaml takes the instance config on disk, stale value included.
    expect(w.read("/var/lib/kubelet/config.yaml")).toContain(`containerRuntimeEndpoint: ${CONTAINERD}\n`);
  });

  test("missing: made from the flag (not the annotation), the flag removed, the rest rewritten sorted", async () => {
    const r = await upgradeNode({ flags: `KUBELET_KUBEADM_ARGS="--v=2 --container-runtime-endpoint=${CRIO} --node-ip=10.0.0.9 --pod-infra-container-image=registry.k8s.io/pause:3.10"\n` }, CONTAINERD);
    expect(r.stderr).toBe("");
    expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);
    expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--node-ip=10.0.0.9 --pod-infra-container-image=registry.k8s.io/pause:3.10 --v=2"\n`);
  });

  test('missing, no flag in a readable flags file: containerRuntimeEndpoint "" and the flags file untouched', async () => {
    const flagsText = `KUBELET_KUBEADM_ARGS="--v=2 --node-ip=10.0.0.9"\n`;
    const r = await upgradeNode({ flags: flagsText });
    expect(r.stderr).toBe("");
    expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe('containerRuntimeEndpoint: ""\n');
    expect(flags(w)).toBe(flagsText);
    expect(w.read("/var/lib/kubelet/config.yaml")).toContain('containerRuntimeEndpoint: ""\n');
  });

  test("missing, and the flags file missing or holding no flags: kubeadm's error, no instance config", async () => {
    const gone = await upgradeNode({});
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(
      "error execution phase kubelet-config: error reading kubeadm flags file: failed to read file: open /var/lib/kubelet/kubeadm-flags.env: no such file or directory\n",
    );
    expect(w.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
    const empty = await upgradeNode({ flags: 'KUBELET_KUBEADM_ARGS=""\n' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('error execution phase kubelet-config: error reading kubeadm flags file: no flags found in file "/var/lib/kubelet/kubeadm-flags.env"\n');
    expect(w.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
  });
});

test("gate off: upgrade apply re-annotates its node, upgrade node does not (1.34)", async () => {
  const { lab, cp, w } = await cluster("v1.34.1");
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBeUndefined();
  await setGates(cp, (cc) => `${cc}featureGates:\n  NodeLocalCRISocket: false\n`);
  // 1.34 finds the socket by the annotation, then instance-config.yaml. (With the gate off kubeadm puts no
  // flag back, so the kubelet is left without an endpoint: the component's kubelet step fixes that.)
  cp.setVersion("v1.34.2");
  w.setVersion("v1.34.2");
  expect((await cp.kubeadm("upgrade", "apply", "v1.34.2", "-y")).stderr).toBe("");
  expect((await w.kubeadm("upgrade", "node")).stderr).toBe("");
  expect(lab.store().nodes.cp1.metadata.annotations[ANNOTATION]).toBe(CONTAINERD);
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBeUndefined();
}, 60000);

test("1.36 honours NodeLocalCRISocket: false (legacy files), but upgrade apply removes its own node's annotation whatever the gate", async () => {
  const { lab, cp, w } = await cluster("v1.35.0", { NodeLocalCRISocket: false });
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO}"\n`);
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBe(CRIO);
  await upgrade(cp, w, "v1.36.0");
  expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).toContain("NodeLocalCRISocket: false");
  expect(lab.store().nodes.cp1.metadata.annotations[ANNOTATION]).toBeUndefined();
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBe(CRIO);
  expect(w.exists("/var/lib/kubelet/instance-config.yaml")).toBe(false);
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CRIO}"\n`);
}, 60000);

test("a node with neither the annotation nor instance-config.yaml: 1.34 fails with its error, 1.35 detects the socket with a warning", async () => {
  const { lab, cp, w } = await cluster("v1.34.1");
  const fs = await import("fs");
  fs.rmSync(w.file("/var/lib/kubelet/instance-config.yaml"));
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBeUndefined();
  w.setVersion("v1.34.1");
  const r = await w.kubeadm("upgrade", "node");
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    "error: unable to fetch the kubeadm-config ConfigMap: failed to get node registration: node w1 doesn't have kubeadm.alpha.kubernetes.io/cri-socket annotation, or kubelet instance config /var/lib/kubelet/instance-config.yaml\nTo see the stack trace of this error execute with --v=5 or higher\n",
  );
  cp.setVersion("v1.35.0");
  expect((await cp.kubeadm("upgrade", "apply", "v1.35.0", "-y")).code).toBe(0);
  w.setVersion("v1.35.0");
  const d = await w.kubeadm("upgrade", "node");
  expect(d.code).toBe(0);
  expect(d.stderr).toContain(`node "w1" lacks annotation "${ANNOTATION}" and kubelet config file "/var/lib/kubelet/instance-config.yaml"; attempting auto-detection`);
  // The gate is on: the missing file is made from the flag, and there is none.
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe('containerRuntimeEndpoint: ""\n');
}, 60000);

test("1.35 post-upgrade fails on a flags file that holds no flags (what a gate-on 1.35 init leaves)", async () => {
  const { w } = await cluster("v1.35.0");
  expect(flags(w)).toBe('KUBELET_KUBEADM_ARGS=""\n');
  const r = await w.kubeadm("upgrade", "node");
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('error execution phase post-upgrade: error reading kubelet env file: no flags found in file "/var/lib/kubelet/kubeadm-flags.env"\n');
  expect(r.stdout).toContain("[upgrade/kubelet-config] The kubelet configuration for this node was successfully upgraded!");
}, 60000);

test("1.31 upgrade node on a worker reads no annotation (no node registration fetched); on a control-plane node it must", async () => {
  const { cp, w } = await cluster("v1.31.4");
  await cp.kubectl("annotate", "node", "w1", `${ANNOTATION}-`);
  await cp.kubectl("annotate", "node", "cp1", `${ANNOTATION}-`);
  const r = await w.kubeadm("upgrade", "node");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const c = await cp.kubeadm("upgrade", "node");
  expect(c.code).toBe(1);
  expect(c.stderr).toContain("unable to fetch the kubeadm-config ConfigMap: failed to get node registration: node cp1 doesn't have kubeadm.alpha.kubernetes.io/cri-socket annotation");
}, 60000);

test("1.32 with the gate on and no annotation or instance config: kubeadm's error, before any phase", async () => {
  const { cp, w } = await cluster("v1.31.4");
  await cp.kubectl("annotate", "node", "w1", `${ANNOTATION}-`);
  await setGates(cp, (cc) => `${cc}featureGates:\n  NodeLocalCRISocket: true\n`);
  cp.setVersion("v1.32.3");
  w.setVersion("v1.32.3");
  expect((await cp.kubeadm("upgrade", "apply", "v1.32.3", "-y")).code).toBe(0);
  const r = await w.kubeadm("upgrade", "node");
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(
    "unable to fetch the kubeadm-config ConfigMap: failed to get node registration: node w1 doesn't have kubeadm.alpha.kubernetes.io/cri-socket annotation\nTo see the stack trace of this error execute with --v=5 or higher\n",
  );
}, 60000);

test("1.37 makes a missing instance-config.yaml from the detected socket, with warnings, and keeps a leftover flag", async () => {
  const { cp, w } = await cluster("v1.36.0");
  const fs = await import("fs");
  fs.rmSync(w.file("/var/lib/kubelet/instance-config.yaml"));
  const leftover = `KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=${CONTAINERD} --node-ip=10.0.0.2"\n`;
  cp.write("/var/lib/kubelet/kubeadm-flags.env", leftover);
  cp.setVersion("v1.37.0");
  w.setVersion("v1.37.0");
  const a = await cp.kubeadm("upgrade", "apply", "v1.37.0", "-y");
  expect(a.stderr).toBe("");
  expect(flags(cp)).toBe(leftover);
  const r = await w.kubeadm("upgrade", "node");
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('Node "w1" lacks a kubelet instance config file "/var/lib/kubelet/instance-config.yaml"; attempting auto-detection');
  expect(r.stderr).toContain("The kubelet instance configuration file /var/lib/kubelet/instance-config.yaml was not found. Creating a new one with defaults. Please verify its contents!");
  expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CRIO}"\n`);
}, 60000);

test("1.37 leaves a cri-socket annotation and --pod-infra-container-image alone; upgrade node ignores a removed gate in the ConfigMap", async () => {
  const { lab, cp, w } = await cluster("v1.36.0");
  await lab.hostKubectl("annotate", "node", "w1", `${ANNOTATION}=${CRIO}`);
  cp.setVersion("v1.37.0");
  w.setVersion("v1.37.0");
  expect((await cp.kubeadm("upgrade", "apply", "v1.37.0", "-y")).code).toBe(0);
  w.write("/var/lib/kubelet/kubeadm-flags.env", `KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n`);
  await setGates(cp, (cc) => `${cc}featureGates:\n  NodeLocalCRISocket: true\n`);
  const r = await w.kubeadm("upgrade", "node");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(lab.store().nodes.w1.metadata.annotations[ANNOTATION]).toBe(CRIO);
  expect(flags(w)).toBe(`KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n`);
}, 60000);

describe("version policy", () => {
  let lab: Lab;
  let cp: LabNode;
  beforeAll(async () => {
    const c = await cluster("v1.33.2");
    lab = c.lab;
    cp = c.cp;
  }, 120000);
  const apply = async (kubeadmVersion: string, target: string, ...extra: string[]) => {
    cp.setVersion(kubeadmVersion);
    return cp.kubeadm("upgrade", "apply", target, ...extra);
  };
  test("two minors at once", async () => {
    const r = await apply("v1.35.0", "v1.35.0", "-y");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Specified version to upgrade to "v1.35.0" is too high; kubeadm can upgrade only 1 minor version at a time');
    expect(r.stderr).toContain("the version argument is invalid due to these fatal errors:");
  });
  test("kubeadm older than the target", async () => {
    const r = await apply("v1.33.2", "v1.34.0", "-y");
    expect(r.stderr).toContain('Specified version to upgrade to "v1.34.0" is at least one minor release higher than the kubeadm minor release (34 > 33). Such an upgrade is not supported');
    const p = await apply("v1.33.2", "v1.33.5", "-y");
    expect(p.code).toBe(1);
    expect(p.stderr).toContain('Specified version to upgrade to "v1.33.5" is higher than the kubeadm version "v1.33.2". Upgrade kubeadm first using the tool you used to install kubeadm');
    expect(p.stderr).toContain("Can be bypassed if you pass the --force flag");
  });
  test("downgrade", async () => {
    const r = await apply("v1.33.2", "v1.33.0", "-y");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Downgrades are not supported");
  });
  test("no -y: kubeadm asks and does not proceed", async () => {
    const r = await apply("v1.33.2", "v1.33.2");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("[upgrade] Are you sure you want to proceed? [y/N]: ");
    expect(r.stderr).toContain("won't proceed; the user didn't answer (Y|y) in order to continue");
    expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).toContain("kubernetesVersion: v1.33.2\n");
  });
  // Fails on 4533d07, which read -fy as one flag named "fy": neither forced nor answered.
  test("-fy is -f and -y, as pflag reads a group of shorthands: the skippable error bypassed, no question asked", async () => {
    const r = await apply("v1.33.2", "v1.33.5", "-fy");
    expect(r.stderr).not.toContain("Can be bypassed if you pass the --force flag");
    expect(r.stdout).not.toContain("Are you sure you want to proceed?");
    expect(r.code).toBe(0);
    expect(lab.store().configMaps["kube-system/kubeadm-config"].data.ClusterConfiguration).toContain("kubernetesVersion: v1.33.5\n");
  });
});
