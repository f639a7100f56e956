/**
 * The stand-in's cluster store, kubectl subset, kubelet health check and reset (all TEST DOUBLES).
 */
import * as fs from "fs";
import { initConfig, joinConfig, Lab, LabNode, parseJoin } from "./helpers";

const CONTAINERD = "unix:///var/run/containerd/containerd.sock";
let lab: Lab;
let cp: LabNode;
let w: LabNode;

beforeAll(async () => {
  lab = new Lab();
  cp = await lab.node("cp1", "v1.33.2", ["containerd"]);
  w = await lab.node("w1", "v1.33.2", ["containerd"]);
  expect((await cp.kubeadm("init", "--config", cp.config("i.yaml", initConfig({ version: "v1.33.2", name: "cp1", gates: { NodeLocalCRISocket: true } })))).code).toBe(0);
  const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
  expect((await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...j })))).code).toBe(0);
}, 120000);
afterAll(async () => lab.close());

describe("cluster store", () => {
  test("concurrent writes from several processes on several nodes lose nothing", async () => {
    const runs = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? cp : w).run("kubectl", ["--kubeconfig", "/etc/kubernetes/kubelet.conf", "label", "node", "w1", `lab/k${i}=v${i}`]));
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual(Array(12).fill(0));
    const labels = lab.store().nodes.w1.metadata.labels;
    for (let i = 0; i < 12; i++) expect(labels[`lab/k${i}`]).toBe(`v${i}`);
  }, 120000);

  test("replace with a stale resourceVersion fails with the API server's conflict", async () => {
    const cm = JSON.parse((await cp.kubectl("get", "configmap", "-n", "kube-system", "kubeadm-config", "-o", "json")).stdout) as { metadata: { resourceVersion: string }; data: Record<string, string> };
    expect(cm.metadata.resourceVersion).toMatch(/^\d+$/);
    const first = await cp.run("kubectl", ["replace", "-f", "-", "--kubeconfig", "/etc/kubernetes/admin.conf"], JSON.stringify(cm));
    expect(first.stdout).toBe("configmap/kubeadm-config replaced\n");
    const stale = await cp.run("kubectl", ["--kubeconfig=/etc/kubernetes/admin.conf", "replace", "-f", "-"], JSON.stringify(cm));
    expect(stale.code).toBe(1);
    expect(stale.stderr).toBe(
      'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "kubeadm-config": the object has been modified; please apply your changes to the latest version and try again\n',
    );
    const yaml = await cp.kubectl("get", "cm", "-n", "kube-system", "kubeadm-config", "-o", "yaml");
    expect(yaml.stdout).toContain("kind: ConfigMap\n");
    expect(yaml.stdout).toMatch(/resourceVersion: "\d+"/);
    const jp = await cp.kubectl("get", "configmap", "kubeadm-config", "-n", "kube-system", "-o", "jsonpath={.data.ClusterConfiguration}");
    expect(jp.stdout).toBe(cm.data.ClusterConfiguration);
  });
});

describe("kubectl", () => {
  test("no credentials on the node: fails like kubectl without a kubeconfig", async () => {
    const r = await w.run("kubectl", ["get", "nodes"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("The connection to the server localhost:8080 was refused - did you specify the right host or port?\n");
    const missing = await w.kubectl("get", "nodes");
    expect(missing.stderr).toBe("error: stat /etc/kubernetes/admin.conf: no such file or directory\n");
  });
  test("annotate and label follow kubectl's overwrite rules", async () => {
    expect((await cp.kubectl("annotate", "node", "w1", "lab/a=1")).stdout).toBe("node/w1 annotated\n");
    const no = await cp.kubectl("annotate", "node", "w1", "lab/a=2");
    expect(no.code).toBe(1);
    expect(no.stderr).toBe("error: --overwrite is false but found the following declared annotation(s): 'lab/a' already has a value (1)\n");
    expect((await cp.kubectl("annotate", "node", "w1", "lab/a=2", "--overwrite")).code).toBe(0);
    expect((await cp.kubectl("get", "node", "w1", "-o", "jsonpath={.metadata.annotations.lab/a}")).stdout).toBe("2");
    // --overwrite=T is true to kubectl's flag library (fails on 4533d07, which took only bare or =true).
    expect((await cp.kubectl("annotate", "node", "w1", "lab/a=3", "--overwrite=T")).code).toBe(0);
    expect((await cp.kubectl("get", "node", "w1", "-o", "jsonpath={.metadata.annotations.lab/a}")).stdout).toBe("3");
    expect((await cp.kubectl("label", "node", "w1", "tier=x")).stdout).toBe("node/w1 labeled\n");
    const l2 = await cp.kubectl("label", "node", "w1", "tier=y");
    expect(l2.stderr).toBe("error: 'tier' already has a value (x), and --overwrite is false\n");
    expect((await cp.kubectl("label", "node", "w1", "tier-")).stdout).toBe("node/w1 unlabeled\n");
    expect(lab.store().nodes.w1.metadata.labels.tier).toBeUndefined();
    const nf = await cp.kubectl("get", "node", "nope");
    expect(nf.stderr).toBe('Error from server (NotFound): nodes "nope" not found\n');
  });
  // Fails on 047a1e4: the second name was read as an annotation spec, and get, cordon and uncordon took the first name only.
  test("several Nodes in one call, as kubectl takes them: get (a List of those found; exit 1 naming each missing one), annotate, cordon, uncordon", async () => {
    const path = "jsonpath={range .items[*]}{.metadata.name}|{.spec.unschedulable}|{.metadata.annotations.lab/m}{\"\\n\"}{end}";
    expect(await cp.kubectl("annotate", "--overwrite", "node", "cp1", "w1", "lab/m=x y")).toEqual({ code: 0, stdout: "node/cp1 annotated\nnode/w1 annotated\n", stderr: "" });
    expect((await cp.kubectl("cordon", "cp1", "w1")).stdout).toBe("node/cp1 cordoned\nnode/w1 cordoned\n");
    expect(await cp.kubectl("get", "nodes", "w1", "cp1", "-o", path)).toEqual({ code: 0, stdout: "w1|true|x y\ncp1|true|x y\n", stderr: "" });
    expect(await cp.kubectl("get", "nodes", "w1", "nope", "-o", path)).toEqual({ code: 1, stdout: "w1|true|x y\n", stderr: 'Error from server (NotFound): nodes "nope" not found\n' });
    expect((await cp.kubectl("uncordon", "cp1", "w1")).stdout).toBe("node/cp1 uncordoned\nnode/w1 uncordoned\n");
    expect((await cp.kubectl("annotate", "--overwrite", "node", "cp1", "w1", "lab/m-")).code).toBe(0);
    expect(await cp.kubectl("get", "nodes", "w1", "cp1", "-o", path)).toEqual({ code: 0, stdout: "w1||\ncp1||\n", stderr: "" });
    // A missing Node: cordon changes none (kubectl looks every Node up first); annotate changes the others.
    expect(await cp.kubectl("cordon", "w1", "nope")).toEqual({ code: 1, stdout: "", stderr: 'Error from server (NotFound): nodes "nope" not found\n' });
    expect(lab.store().nodes.w1.spec.unschedulable).toBeUndefined();
    expect(await cp.kubectl("annotate", "--overwrite", "node", "nope", "w1", "lab/m=z")).toEqual({ code: 1, stdout: "node/w1 annotated\n", stderr: 'Error from server (NotFound): nodes "nope" not found\n' });
    expect(lab.store().nodes.w1.metadata.annotations["lab/m"]).toBe("z");
  });
  test("jsonpath text outside the braces is printed as it is, in a range and for one Node (the tag lib.sh's pk_nodes_lines leads each line with)", async () => {
    const tag = "0f1e2d3c-4b5a-6978-8a9b-acbdcedf0011";
    expect(await cp.kubectl("get", "nodes", "w1", "cp1", "-o", `jsonpath={range .items[*]}${tag}{.metadata.name}|{.spec.unschedulable}{"\\n"}{end}`)).toEqual({ code: 0, stdout: `${tag}w1|\n${tag}cp1|\n`, stderr: "" });
    expect(await cp.kubectl("get", "node", "w1", "-o", `jsonpath=${tag}{.metadata.name}|{.spec.unschedulable}{"\\n"}`)).toEqual({ code: 0, stdout: `${tag}w1|\n`, stderr: "" });
  });
  test("get prints --show-labels' LABELS and -o wide's columns as kubectl does, and refuses flags it does not read", async () => {
    expect((await cp.kubectl("label", "node", "w1", "lab/z=last", "lab/b=first")).code).toBe(0);
    const labels = lab.store().nodes.w1.metadata.labels;
    const expected = Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join(",");
    const shown = (await cp.kubectl("get", "node", "w1", "--show-labels")).stdout.split("\n");
    expect(shown[0]).toMatch(/^NAME +STATUS +ROLES +AGE +VERSION +LABELS$/);
    expect(shown[1]).toMatch(/^w1 +Ready +<none> +\S+ +v1\.33\.2 +(\S+)$/);
    expect(shown[1]!.split(/ +/).at(-1)).toBe(expected);
    expect(expected.indexOf("lab/b=first")).toBeLessThan(expected.indexOf("lab/z=last"));
    const wide = (await cp.kubectl("get", "nodes", "-o", "wide")).stdout.split("\n");
    expect(wide[0]).toMatch(/^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME$/);
    const runtime = (await cp.kubectl("get", "node", "w1", "-o", "jsonpath={.status.nodeInfo.containerRuntimeVersion}")).stdout;
    expect(runtime).not.toBe("");
    expect(wide.find((l) => l.startsWith("w1 "))).toMatch(new RegExp(`^w1 +Ready +<none> +\\S+ +v1\\.33\\.2 +<none> +<none> +<unknown> +<unknown> +${runtime.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`));
    const cm = (await cp.kubectl("get", "cm", "-n", "kube-system", "kubeadm-config", "--show-labels")).stdout;
    expect(cm).toMatch(/^NAME +DATA +AGE +LABELS\nkubeadm-config +\d+ +\S+ +<none>\n$/);
    // pflag's booleans: --show-labels=True shows them, =0 does not, =yes is refused.
    expect((await cp.kubectl("get", "node", "w1", "--show-labels=True")).stdout).toContain(expected);
    expect((await cp.kubectl("get", "node", "w1", "--show-labels=0")).stdout).not.toContain("LABELS");
    const badFlag = (verb: string, flag: string) =>
      `error: invalid argument "yes" for "--${flag}" flag: strconv.ParseBool: parsing "yes": invalid syntax\nSee 'kubectl ${verb} --help' for usage.\n`;
    expect(await cp.kubectl("get", "node", "w1", "--show-labels=yes")).toEqual({ code: 1, stdout: "", stderr: badFlag("get", "show-labels") });
    // The flag is read before anything else: before the resource type, the Nodes, the changes.
    expect(await cp.kubectl("get", "pods", "--show-labels=yes")).toEqual({ code: 1, stdout: "", stderr: badFlag("get", "show-labels") });
    expect(await cp.kubectl("annotate", "node", "w1", "w1", "lab/q=1", "--overwrite=yes")).toEqual({ code: 1, stdout: "", stderr: badFlag("annotate", "overwrite") });
    expect(await cp.kubectl("label", "node", "w1", "--overwrite=yes")).toEqual({ code: 1, stdout: "", stderr: badFlag("label", "overwrite") });
    // The last of several wins, as pflag reads them.
    expect((await cp.kubectl("get", "node", "w1", "--show-labels", "--show-labels=false")).stdout).not.toContain("LABELS");
    // A namespace with no ConfigMaps: kubectl's note on stderr, no table.
    expect(await cp.kubectl("get", "cm", "-n", "empty")).toEqual({ code: 0, stdout: "", stderr: "No resources found in empty namespace.\n" });
    expect((await cp.kubectl("get", "cm", "-n", "empty", "-o", "json")).stdout).toContain('"items": []');
    const refused = await cp.kubectl("get", "nodes", "-l", "lab/b=first", "--no-headers");
    expect(refused).toEqual({ code: 1, stdout: "", stderr: "error: this lab stand-in's kubectl get does not support -l, --no-headers (it reads -o/--output, -n/--namespace and --show-labels)\n" });
  });
  test("cordon, drain (blocked by a PDB from the host, then not), uncordon", async () => {
    expect((await cp.kubectl("cordon", "w1")).stdout).toBe("node/w1 cordoned\n");
    expect((await cp.kubectl("get", "nodes")).stdout).toMatch(/\nw1 +Ready,SchedulingDisabled /);
    const block = await lab.hostKubectl("lab", "block-drain", "w1");
    expect(block.code).toBe(0);
    const d = await cp.kubectl("drain", "w1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s", "--grace-period=10");
    expect(d.code).toBe(1);
    expect(d.stdout).toBe("node/w1 already cordoned\n");
    expect(d.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(d.stderr).toContain('error: unable to drain node "w1"');
    expect(lab.store().nodes.w1.spec.unschedulable).toBe(true);
    await lab.hostKubectl("lab", "unblock-drain", "w1");
    const ok = await cp.kubectl("drain", "w1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s", "--grace-period=10");
    expect(ok.stdout).toBe("node/w1 already cordoned\nnode/w1 drained\n");
    expect((await cp.kubectl("uncordon", "w1")).stdout).toBe("node/w1 uncordoned\n");
    const host = await lab.hostKubectl("get", "node", "w1", "-o", "jsonpath={.spec.unschedulable}");
    expect(host).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe("kubelet health check", () => {
  async function expectFailed(n: LabNode, reason: string): Promise<void> {
    expect((await n.systemctl("restart", "kubelet")).code).toBe(0);
    const a = await n.systemctl("is-active", "kubelet");
    expect(a).toEqual({ code: 3, stdout: "failed\n", stderr: "" });
    const st = await n.systemctl("status", "kubelet");
    expect(st.code).toBe(3);
    expect(st.stdout).toContain(reason);
    expect((await cp.kubectl("get", "node", n.name)).stdout).toMatch(new RegExp(`\\n${n.name} +NotReady `));
  }
  async function expectActive(n: LabNode): Promise<void> {
    expect((await n.systemctl("restart", "kubelet")).code).toBe(0);
    expect(await n.systemctl("is-active", "kubelet")).toEqual({ code: 0, stdout: "active\n", stderr: "" });
    // Fails on 0e207a5: --quiet printed `active` too (a bare line in every kubelet step's output).
    expect(await n.systemctl("is-active", "--quiet", "kubelet")).toEqual({ code: 0, stdout: "", stderr: "" });
    expect((await cp.kubectl("get", "node", n.name)).stdout).toMatch(new RegExp(`\\n${n.name} +Ready `));
  }
  const saved: Record<string, string> = {};
  beforeEach(() => {
    for (const f of ["/var/lib/kubelet/config.yaml", "/var/lib/kubelet/kubeadm-flags.env"]) saved[f] = w.read(f)!;
  });
  afterEach(async () => {
    for (const [f, t] of Object.entries(saved)) w.write(f, t);
    w.setVersion("v1.33.2");
    await expectActive(w);
  });

  test("unparseable config.yaml", async () => {
    w.write("/var/lib/kubelet/config.yaml", "apiVersion: [unclosed\n");
    await expectFailed(w, "failed to load kubelet config file, path: /var/lib/kubelet/config.yaml");
  });
  test("containerRuntimeEndpoint pointing at no socket, or empty", async () => {
    w.write("/var/lib/kubelet/config.yaml", saved["/var/lib/kubelet/config.yaml"].replace(CONTAINERD, "unix:///run/crio/crio.sock"));
    await expectFailed(w, "dial unix /run/crio/crio.sock: connect: no such file or directory");
    w.write("/var/lib/kubelet/config.yaml", saved["/var/lib/kubelet/config.yaml"].replace(`containerRuntimeEndpoint: ${CONTAINERD}`, 'containerRuntimeEndpoint: ""'));
    await expectFailed(w, "the container runtime endpoint address was not specified or empty");
  });
  test("the flag in kubeadm-flags.env beats config.yaml; instance-config.yaml alone does nothing", async () => {
    w.write("/var/lib/kubelet/kubeadm-flags.env", 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/missing.sock"\n');
    await expectFailed(w, "dial unix /run/missing.sock");
    w.write("/var/lib/kubelet/kubeadm-flags.env", saved["/var/lib/kubelet/kubeadm-flags.env"]);
    w.write("/var/lib/kubelet/config.yaml", saved["/var/lib/kubelet/config.yaml"].replace(`containerRuntimeEndpoint: ${CONTAINERD}`, 'containerRuntimeEndpoint: ""'));
    expect(w.read("/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
    await expectFailed(w, "not specified or empty");
  });
  test("flags this kubelet version no longer accepts", async () => {
    for (const [version, flag] of [["v1.24.0", "--network-plugin=cni"], ["v1.27.0", "--container-runtime=remote"], ["v1.35.0", "--pod-infra-container-image=registry.k8s.io/pause:3.10"]]) {
      w.setVersion(version);
      w.write("/var/lib/kubelet/kubeadm-flags.env", `KUBELET_KUBEADM_ARGS="${flag}"\n`);
      await expectFailed(w, `failed to parse kubelet flag: unknown flag: ${flag.split("=")[0]}`);
    }
    w.setVersion("v1.34.0");
    w.write("/var/lib/kubelet/kubeadm-flags.env", 'KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10"\n');
    await expectActive(w);
  }, 120000);
});

describe("reset and durations", () => {
  test("reset wipes kubeadm's files, stops the kubelet, keeps the Node object; a re-join works", async () => {
    const r = await w.kubeadm("reset", "-f");
    expect(r.code).toBe(0);
    for (const f of ["/etc/kubernetes/kubelet.conf", "/etc/kubernetes/pki", "/var/lib/kubelet/config.yaml", "/var/lib/kubelet/instance-config.yaml", "/var/lib/kubelet/kubeadm-flags.env"]) {
      expect(w.exists(f)).toBe(false);
    }
    expect(w.exists("/var/lib/kubelet")).toBe(true);
    expect((await w.systemctl("is-active", "kubelet")).stdout).toBe("inactive\n");
    expect(lab.store().nodes.w1).toBeDefined();
    expect((await cp.kubectl("get", "node", "w1")).stdout).toMatch(/\nw1 +NotReady /);
    await expectRestartFails();
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    const again = await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", ...j })));
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect((await cp.kubectl("get", "node", "w1")).stdout).toMatch(/\nw1 +Ready /);
  }, 120000);
  test("two runtimes: reset without --cri-socket fails on a worker with kubeadm's message, changing nothing; with it, it runs", async () => {
    await w.addRuntime("cri-dockerd");
    const refused = await w.kubeadm("reset", "-f");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      "found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field in the kubeadm configuration file: " +
        "unix:///var/run/containerd/containerd.sock, unix:///var/run/cri-dockerd.sock\nTo see the stack trace of this error execute with --v=5 or higher\n",
    );
    expect(w.exists("/etc/kubernetes/kubelet.conf")).toBe(true);
    expect(w.exists("/var/lib/kubelet/instance-config.yaml")).toBe(true);
    const ok = await w.kubeadm("reset", "-f", "--cri-socket", CONTAINERD);
    expect(ok.code).toBe(0);
    expect(w.exists("/etc/kubernetes/kubelet.conf")).toBe(false);
    const j = parseJoin((await cp.kubeadm("token", "create", "--print-join-command")).stdout);
    expect((await w.kubeadm("join", "--config", w.config("j.yaml", joinConfig({ name: "w1", criSocket: CONTAINERD, ...j })))).code).toBe(0);
  }, 120000);
  test("a control-plane node with an admin kubeconfig takes its socket from the cluster (instance config), so two runtimes do not fail it", async () => {
    await cp.addRuntime("crio");
    const r = await cp.kubeadm("reset", "-f");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(cp.exists("/etc/kubernetes/admin.conf")).toBe(false);
  }, 120000);
  async function expectRestartFails(): Promise<void> {
    await w.systemctl("restart", "kubelet");
    expect((await w.systemctl("is-active", "kubelet")).code).toBe(3);
  }
  test("step durations come from $LAB_DIR/config.json", async () => {
    lab.setConfig({ durations: { other: 1 } });
    const t0 = Date.now();
    await cp.systemctl("restart", "kubelet");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    lab.setConfig({});
    expect(fs.existsSync(lab.labDir)).toBe(true);
  });
});
