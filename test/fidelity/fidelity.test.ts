/**
 * The fidelity test's own parts: the cases it renders, how it compares and reports, and the
 * throwaway node it runs commands in. (`npm run fidelity` runs the comparison itself.)
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { FidelityCase, GATES, INPUTS, allCases, minorOf, phaseArgs, renderConfig, socketPaths } from "./cases";
import { OUTCOME, compareArtifacts, outcomeText, readArtifacts } from "./compare";
import { KnownDifference, changedLines, explain } from "./known";
import { CaseResult, cellText, counts, renderTable } from "./report";
import { runInNamespace, prepareRoot } from "./namespace";
import { parseOptions, selectPhases } from "./run";
import { KUBE_APISERVER_VERSION, freePorts, realKubeconfig, replaceObject, startRealApi } from "./kubeapiserver";
import { UPLOAD_INPUTS, dataText, uploadCases } from "./uploadconfig";
import { UPGRADE_INPUTS, clusterConfiguration, upgradeCases } from "./upgrade";

const input = (id: string) => INPUTS.find((i) => i.id === id)!;
const kase = (version: string, gate: FidelityCase["gate"], id: string): FidelityCase => ({ version, minor: minorOf(version), gate, input: input(id), phase: "kubelet-start" });

describe("cases", () => {
  test("every version x gate x input, in table order", () => {
    const cs = allCases(["v1.33.13", "v1.37.2"]);
    const perGate = GATES.map((g) => INPUTS.filter((i) => !i.onlyGates || i.onlyGates.includes(g)).length);
    expect(cs).toHaveLength(2 * perGate.reduce((a, b) => a + b));
    expect(cs.filter((c) => c.input.id === "bad-gate").map((c) => c.gate)).toEqual(["default", "default"]);
    expect(cs[0]).toMatchObject({ version: "v1.33.13", minor: 33, gate: "default", input: { id: "detected" } });
    expect(cs[cs.length - 1]).toMatchObject({ version: "v1.37.2", minor: 37, gate: "off", input: { id: "extra-args" } });
  });

  test("the config names the gate only when the case sets it, and the patches only in patch-config", () => {
    const docs = (c: FidelityCase) => parseAllDocuments(renderConfig(c)).map((d) => d.toJS() as Record<string, any>);
    const [init, cluster] = docs(kase("v1.34.4", "default", "detected"));
    expect(init.kind).toBe("InitConfiguration");
    expect(init.nodeRegistration).toEqual({ name: "node-1" });
    expect(cluster).toEqual({ apiVersion: "kubeadm.k8s.io/v1beta4", kind: "ClusterConfiguration", kubernetesVersion: "v1.34.4" });
    expect(docs(kase("v1.32.13", "off", "declared"))[1].featureGates).toEqual({ NodeLocalCRISocket: false });
    expect(docs(kase("v1.32.13", "default", "bad-gate"))[1].featureGates).toEqual({ NoSuchGate: true });
    expect(docs(kase("v1.32.13", "on", "declared"))[0].nodeRegistration.criSocket).toBe("unix:///var/run/crio/crio.sock");
    expect(docs(kase("v1.32.13", "on", "patch-config"))[0].patches).toEqual({ directory: "/etc/kubernetes/fidelity-patches" });
    expect(docs(kase("v1.32.13", "on", "patch-flag"))[0].patches).toBeUndefined();
    expect(phaseArgs(kase("v1.32.13", "on", "patch-flag"))).toEqual([
      "init", "phase", "kubelet-start", "--config", "/etc/kubernetes/fidelity-config.yaml", "--patches", "/etc/kubernetes/fidelity-patches",
    ]);
    expect(docs(kase("v1.32.13", "on", "extra-args"))[0].nodeRegistration.kubeletExtraArgs).toEqual([
      { name: "v", value: "2" },
      { name: "node-ip", value: "10.0.0.5" },
    ]);
  });

  test("sockets: the input's runtimes and the patched socket", () => {
    expect(socketPaths(input("declared"))).toEqual(["/run/containerd/containerd.sock", "/run/crio/crio.sock", "/run/patched.sock"]);
  });
});

describe("comparison", () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-test-"))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("outcome keeps the error and drops klog lines", () => {
    expect(outcomeText(0, "W1201 00:48:04.330477   12302 version.go:108] noise\n")).toBe("ok\n");
    expect(outcomeText(1, "W1201 00:48:04.330477   12302 initconfiguration.go:120] warn\nerror: bad\nTo see the stack trace\n")).toBe(
      "exit 1:\nerror: bad\nTo see the stack trace\n",
    );
  });

  test("one byte, a mode, or a missing file makes a difference; identical files do not", () => {
    const write = (side: string, text: string, mode: number) => {
      const f = path.join(dir, side, "var/lib/kubelet/a.yaml");
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, text);
      fs.chmodSync(f, mode);
    };
    const files = ["/var/lib/kubelet/a.yaml", "/var/lib/kubelet/absent"];
    write("r", "x: 1\n", 0o644);
    write("s", "x: 1\n", 0o644);
    const same = compareArtifacts(readArtifacts(path.join(dir, "r"), files, 0, ""), readArtifacts(path.join(dir, "s"), files, 0, ""));
    expect(same.map((c) => [c.name, c.same])).toEqual([[OUTCOME, true], [files[0], true], [files[1], true]]);

    write("s", "x: 2\n", 0o644);
    const byte = compareArtifacts(readArtifacts(path.join(dir, "r"), files, 0, ""), readArtifacts(path.join(dir, "s"), files, 0, ""));
    expect(byte[1].same).toBe(false);
    expect(byte[1].diff).toContain("-x: 1\n+x: 2\n");
    expect(byte[1].diff).toMatch(/^--- real kubeadm\n\+\+\+ stand-in\n/);

    write("s", "x: 1\n", 0o600);
    const mode = compareArtifacts(readArtifacts(path.join(dir, "r"), files, 0, ""), readArtifacts(path.join(dir, "s"), files, 0, ""));
    expect(mode[1].diff).toContain("-(mode 644)\n+(mode 600)\n");

    fs.rmSync(path.join(dir, "s", files[0]));
    const gone = compareArtifacts(readArtifacts(path.join(dir, "r"), files, 0, ""), readArtifacts(path.join(dir, "s"), files, 1, "error: no"));
    expect(gone.filter((c) => !c.same).map((c) => c.name)).toEqual([OUTCOME, files[0]]);
    expect(gone[1].diff).toContain("+(no such file)");
  });

  test("a known difference explains only its minors, gates, inputs, artifact and lines", () => {
    const cfg = "/var/lib/kubelet/config.yaml";
    const k: KnownDifference = { id: "k1", minors: [33, 34], gates: ["off"], inputs: ["detected"], artifacts: [cfg], lines: [/-crashLoopBackOff: \{\}/], reason: "r" };
    const diff = "--- real kubeadm\n+++ stand-in\n@@ -1 +1 @@\n a\n-crashLoopBackOff: {}\n";
    expect(changedLines(diff)).toEqual(["-crashLoopBackOff: {}"]);
    expect(explain(kase("v1.34.4", "off", "detected"), cfg, diff, [k])).toEqual({ known: [k], unexplained: [] });
    const none = { known: [], unexplained: ["-crashLoopBackOff: {}"] };
    expect(explain(kase("v1.35.4", "off", "detected"), cfg, diff, [k])).toEqual(none);
    expect(explain(kase("v1.34.4", "on", "detected"), cfg, diff, [k])).toEqual(none);
    expect(explain(kase("v1.34.4", "off", "declared"), cfg, diff, [k])).toEqual(none);
    expect(explain(kase("v1.34.4", "off", "detected"), OUTCOME, diff, [k])).toEqual(none);
    // a second change in the same file is not hidden by the known one; a pattern matches whole lines only
    expect(explain(kase("v1.34.4", "off", "detected"), cfg, `${diff}+x: 1\n`, [k]).unexplained).toEqual(["+x: 1"]);
    expect(explain(kase("v1.34.4", "off", "detected"), cfg, "-crashLoopBackOff: {} # more\n", [k]).unexplained).toHaveLength(1);
  });

  test("table cells and counts: unexplained differences fail", () => {
    const k: KnownDifference = { id: "k1", minors: [34, 34], artifacts: [OUTCOME], lines: [/.*/], reason: "r" };
    const r = (c: FidelityCase, diffs: CaseResult["differences"]): CaseResult => ({ case: c, standinCommand: "init", comparisons: [], differences: diffs });
    const results = [
      r(kase("v1.34.4", "default", "detected"), []),
      r(kase("v1.34.4", "on", "detected"), [{ artifact: "/var/lib/kubelet/config.yaml", known: [], unexplained: ["+x"], diff: "d" }]),
      r(kase("v1.34.4", "off", "detected"), [{ artifact: OUTCOME, known: [k], unexplained: [], diff: "d" }]),
    ];
    expect(results.map((x) => cellText(x))).toEqual(["same", "NEW config.yaml", "k1"]);
    expect(counts(results)).toEqual({ passed: 2, failed: 1 });
    const table = renderTable(results, ["v1.34.4"], INPUTS.map((i) => i.id)).split("\n");
    expect(table[0]).toBe(`| kubeadm | NodeLocalCRISocket | ${INPUTS.map((i) => i.id).join(" | ")} |`);
    expect(table[2]).toBe(`| v1.34.4 | absent | same | ${INPUTS.slice(1).map(() => "-").join(" | ")} |`);
    expect(table[3]).toMatch(/^\| v1\.34\.4 \| true \| NEW config\.yaml \|/);
  });

  test("options", () => {
    expect(parseOptions(["--versions", "v1.34.4,1.36", "--jobs=1", "--keep", "--phases", "upgrade-node"])).toEqual({
      versions: ["v1.34.4", "1.36"],
      jobs: 1,
      keep: true,
      phases: ["upgrade-node"],
    });
    expect(() => parseOptions(["--jobs", "0"])).toThrow(/positive/);
    expect(() => parseOptions(["--bogus"])).toThrow(/unknown argument/);
  });
});

describe("upgrade and upload-config cases, and the real API", () => {
  test("every version x gate x worker state; the ConfigMap names the gate only when set", () => {
    const cs = upgradeCases(["v1.36.3"]);
    expect(cs).toHaveLength(GATES.length * UPGRADE_INPUTS.length);
    expect(cs.every((c) => c.phase === "upgrade-node" && c.minor === 36)).toBe(true);
    expect(parseAllDocuments(clusterConfiguration("v1.36.3", "default"))[0].toJS()).toEqual({
      apiVersion: "kubeadm.k8s.io/v1beta4",
      kind: "ClusterConfiguration",
      kubernetesVersion: "v1.36.3",
      networking: { dnsDomain: "cluster.local", serviceSubnet: "10.96.0.0/12" },
    });
    expect((parseAllDocuments(clusterConfiguration("v1.33.13", "off"))[0].toJS() as Record<string, unknown>).featureGates).toEqual({ NodeLocalCRISocket: false });
    expect(selectPhases(["upgrade-node"]).map((p) => p.phase)).toEqual(["upgrade-node"]);
    expect(() => selectPhases(["join"])).toThrow(/unknown phase join/);
  });

  test("upload-config: every version x gate; the ConfigMap's data as one text, keys sorted", () => {
    const cs = uploadCases(["v1.31.14", "v1.37.2"]);
    expect(cs).toHaveLength(2 * GATES.length * UPLOAD_INPUTS.length);
    expect(cs.every((c) => c.phase === "upload-config")).toBe(true);
    expect(dataText({ data: { b: "2\n", ClusterConfiguration: "x: 1\n" } })).toBe("# data.ClusterConfiguration\nx: 1\n# data.b\n2\n");
    expect(dataText(undefined)).toBeUndefined();
    expect(selectPhases(["upload-config"]).map((p) => p.phase)).toEqual(["upload-config"]);
  });

  test("the kubeconfig names the API and a token, and skips verifying the self-signed certificate", () => {
    const k = realKubeconfig("https://127.0.0.1:1234", "u", "t");
    expect(k).toContain("    server: https://127.0.0.1:1234\n    insecure-skip-tls-verify: true\n");
    expect(k).toContain("    token: t\n");
  });

  // The real API (etcd from Debian, kube-apiserver from tools/build-kubeadm.sh's cache): only where both are here.
  const cachedApiserver = path.join(process.env.PULUMI_KUBEADM_CACHE ?? path.join(os.homedir(), ".cache", "pulumi-kubeadm"), "kube-apiserver", KUBE_APISERVER_VERSION, "kube-apiserver");
  const haveApi = fs.existsSync(cachedApiserver) && spawnSync("etcd", ["--version"]).status === 0;
  (haveApi ? test : test.skip)(
    "a start whose port another process took in the meantime is tried again on new ports",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-api-"));
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", () => resolve()));
      const picks: number[][] = [];
      const pick = async () => {
        const free = await freePorts(3);
        // The first attempt's API port is held by another process, as when a freed port is reused.
        picks.push(picks.length === 0 ? [free[0] as number, free[1] as number, (taken.address() as net.AddressInfo).port] : free);
        return picks[picks.length - 1] as number[];
      };
      try {
        const api = await startRealApi(dir, cachedApiserver, pick);
        try {
          expect(picks.length).toBe(2);
          expect(api.url).toBe(`https://127.0.0.1:${picks[1]?.[2]}`);
          expect((await api.request("GET", "/api/v1/namespaces/kube-system")).code).toBe(200);
        } finally {
          await api.stop();
        }
      } finally {
        taken.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    120000,
  );

  (haveApi ? test : test.skip)(
    "the real API starts, replaces objects, and its audit log names who asked for what",
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-api-"));
      const api = await startRealApi(dir, cachedApiserver);
      try {
        expect(api.versions.kubeApiserver).toBe(KUBE_APISERVER_VERSION);
        const mark = api.auditMark();
        for (const v of ["1", "2"]) {
          await replaceObject(api, "/api/v1/namespaces/kube-system/configmaps", "c", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { k: v } });
        }
        expect((await api.request("GET", "/api/v1/namespaces/kube-system/configmaps/c")).body.data).toEqual({ k: "2" });
        expect(api.requestsSince(mark, "kubernetes-admin")).toContain("get /api/v1/namespaces/kube-system/configmaps/c");
        expect(api.requestsSince(mark, "system:node:node-1")).toEqual([]);
      } finally {
        await api.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    120000,
  );
});

describe("throwaway node", () => {
  const root = () => fs.mkdtempSync(path.join(os.tmpdir(), "fidelity-ns-"));
  const canNamespace = process.getuid?.() === 0;
  (canNamespace ? test : test.skip)("own hostname, listening sockets, node paths land in the host folder only", async () => {
    const dir = root();
    try {
      const r = path.join(dir, "root");
      prepareRoot(r);
      const marker = `fidelity-${process.pid}-${Date.now()}`;
      const res = await runInNamespace({
        root: r,
        hostname: "node-x",
        sockets: ["/run/containerd/containerd.sock"],
        command: ["bash", "-c", `hostname; test -S /run/containerd/containerd.sock && echo sock; echo hi > /var/lib/kubelet/${marker}; echo $PATH; exit 3`],
      });
      expect(res.code).toBe(3);
      expect(res.stdout.split("\n").slice(0, 3)).toEqual(["node-x", "sock", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]);
      expect(fs.readFileSync(path.join(r, "var/lib/kubelet", marker), "utf8")).toBe("hi\n");
      expect(fs.existsSync(path.join("/var/lib/kubelet", marker))).toBe(false);
      expect(fs.existsSync(path.join(r, "run/containerd/containerd.sock"))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
