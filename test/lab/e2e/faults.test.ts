/**
 * Faults on the lab: a node with two CRI sockets and none declared; a worker's sshd killed in the middle
 * of its join; a hostile label value and a hostile kubelet flag value in the stack file; a kubelet that
 * fails on its new files.
 */
import { existsSync, unlinkSync, writeFileSync } from "fs";
import { join } from "path";
import { startNodeSshd, stopNodeSshd, hostPathOf } from "../nodes";
import { buildPlan, validateCluster } from "../../../components";
import { LIBRARY_PACKED, LIBRARY_PATH, LIBRARY_TEXT } from "../../../components/scripts/library";
import { CONTAINERD, CRIO, LAB_DIR, LAB_INSTALLS, MIXED, kubeadmEvents, labDown, labUp, nodeFile, nodeTree, ok, run, setLabClock, storeNodes, writeStack, type TestNode, E2E_TEST_LIMIT_MS } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);

afterAll(labDown);

test("two sockets and no criSocket: apply fails naming the node and both sockets; its files are unchanged", async () => {
  const nodes: TestNode[] = MIXED.map((n) => (n.name === "worker-1" ? { ...n, criSocket: undefined, runtimes: ["containerd", "crio"] } : n));
  const stack = writeStack("two-sockets", "v1.34.2", nodes);
  await labUp(stack);
  const before = nodeTree("worker-1");
  const result = await run(stack);
  expect(result.ok).toBe(false);
  const failed = result.resources.filter((r) => !r.ok);
  expect(failed.map((r) => r.name)).toEqual(["e2e-worker-1-prepare"]);
  // The error quotes prepare's command (pulumi-command's format) but not the packed library, which rides on stdin.
  expect(failed[0]?.error).not.toContain(LIBRARY_PACKED.slice(0, 64));
  expect(failed[0]?.error).toContain(
    "pulumi-kubeadm: node worker-1: found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field in the kubeadm configuration file: unix:///var/run/containerd/containerd.sock, unix:///var/run/crio/crio.sock",
  );
  // Only prepare's own shell library was added (it is installed before the socket is settled); every
  // kubeadm, kubelet and pulumi-kubeadm state file is as it was.
  const after = nodeTree("worker-1");
  expect(Object.keys(after).filter((p) => !(p in before))).toEqual([LIBRARY_PATH]);
  expect(after[LIBRARY_PATH]).toBe(LIBRARY_TEXT);
  delete after[LIBRARY_PATH];
  expect(after).toEqual(before);
  expect(kubeadmEvents().filter((e) => e.startsWith("worker-1 "))).toEqual([]);
});

test("a worker's sshd killed mid-join: apply fails naming it; after it is back a re-run completes, nothing done twice", async () => {
  const stack = writeStack("sshd-killed", "v1.34.2", MIXED);
  await labUp(stack, { join: 3 });
  const pidFile = hostPathOf(LAB_DIR, "worker-1", "/var/lib/pulumi-kubeadm/run/join/pid");
  const applying = run(stack);
  const deadline = Date.now() + 120_000;
  while (!existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(pidFile)).toBe(true);
  // A lost connection: sshd and its sessions end, kubeadm (detached by pk_run_once) carries on. Killing
  // kubeadm too, as this did, made the test depend on how far the join had got: under load the re-run
  // found a half-joined node (a node whose kubeadm was killed is reset first now: runOnce.test.ts).
  await stopNodeSshd("worker-1", { labDir: LAB_DIR, detached: false });
  const first = await applying;
  expect(first.ok).toBe(false);
  const failed = first.resources.filter((r) => !r.ok).map((r) => r.name);
  expect(failed).toEqual(["e2e-worker-1-join"]);
  expect(first.resources.find((r) => r.name === "e2e-worker-1-join")?.error).toMatch(/worker-1/);

  await startNodeSshd("worker-1", { labDir: LAB_DIR });
  const second = await run(stack);
  ok(second);
  // The re-run ran exactly what the first run had not finished (the engine stops scheduling at the
  // first failure), worker-1's join among them; nothing that had succeeded ran again.
  const doneFirst = new Set(first.resources.filter((r) => r.ok && r.ran.length > 0).map((r) => r.name));
  const ranSecond = second.resources.filter((r) => r.ran.length > 0).map((r) => r.name);
  expect(ranSecond).toContain("e2e-worker-1-join");
  // Its join was not started again: kubeadm had carried on without the connection.
  expect(second.engine.output).toMatch(/node worker-1: join (finished after an earlier connection was lost|still running from an earlier connection; waiting)/);
  expect(ranSecond.filter((n) => doneFirst.has(n))).toEqual([]);
  // Between them the two runs ran every command of the plan once (and the component's two records).
  const steps = buildPlan(validateCluster({ kubernetesVersion: "v1.34.2", controlPlaneEndpoint: "cp.lab:6443", nodes: MIXED.map((n) => ({ name: n.name, role: n.role, criSocket: n.criSocket, host: n.name })) }));
  expect(ranSecond.length + doneFirst.size).toBe(steps.length + 2);
  const events = kubeadmEvents().filter((e) => / kubeadm (init|join)$/.test(e)).sort();
  expect(events).toEqual(["cp-1 kubeadm init", "cp-2 kubeadm join", "cp-3 kubeadm join", "worker-1 kubeadm join", "worker-2 kubeadm join"]);
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
});

test("a hostile label value is refused before any command runs; a hostile kubelet flag value reaches the node as data", async () => {
  const marker = join(LAB_DIR, "pwned");
  const hostileLabel: TestNode[] = MIXED.map((n) => (n.name === "worker-2" ? { ...n, labels: { tier: `$(touch ${marker})` } } : n));
  const stack = writeStack("hostile-label", "v1.34.2", hostileLabel);
  await labUp(stack);
  const refused = await run(stack);
  expect(refused.ok).toBe(false);
  expect(refused.errors.join("\n")).toContain('node "worker-2": labels.tier: ');
  expect(Object.values(refused.sshSessions).reduce((a, b) => a + b, 0)).toBe(0);
  expect(existsSync(marker)).toBe(false);

  const value = `$(touch${"${IFS}"}${marker})`;
  const hostileFlag: TestNode[] = MIXED.map((n) => (n.name === "worker-2" ? { ...n, criSocket: CRIO, kubeletExtraArgs: [{ name: "node-labels", value: `x=${value}` }] } : n));
  const stack2 = writeStack("hostile-flag", "v1.34.2", hostileFlag);
  const applied = await run(stack2);
  ok(applied);
  expect(nodeFile("worker-2", "/var/lib/kubelet/kubeadm-flags.env")).toContain(`--node-labels=x=${value}`);
  expect(existsSync(marker)).toBe(false);
});

test("a join retried after its join material expired: it fails naming the expiry, and --replace of its join wave's join-material makes fresh material", async () => {
  const nodes: TestNode[] = [
    { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
    { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
  ];
  // The default lifetime: the token lives 2 h. No input holds the clock, so nothing is replaced on its own.
  const stack = writeStack("stale-token", "v1.34.2", nodes);
  await labUp(stack);
  // worker-1 carries a leftover kubelet.conf from an earlier install: kubeadm join fails preflight.
  const leftover = hostPathOf(LAB_DIR, "worker-1", "/etc/kubernetes/kubelet.conf");
  writeFileSync(leftover, "leftover\n");
  const first = await run(stack);
  expect(first.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-1-join"]);
  // Fixed three hours later (the lab's clock moved for the stand-ins): the first token expired, and a
  // preview at that hour still shows no change but the join (and its unit) still to make, and the
  // component's members record, which only an up whose every step succeeded writes.
  unlinkSync(leftover);
  setLabClock(3 * 3600);
  const preview = await run(stack, "preview");
  const pending = preview.engine.steps.filter((s) => s.op !== "same").map((s) => `${s.name}:${s.op}`);
  expect(pending).toContain("e2e-worker-1-join:create");
  expect(pending.filter((p) => !/^e2e-(worker-1-(join|upgrade|kubelet|node-metadata)|batch_1-(drain|uncordon)|workers_1-node-metadata|members):create$/.test(p))).toEqual([]);
  const second = await run(stack);
  expect(second.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-1-join"]);
  // The lab's nodes keep the real time for `date`, so here kubeadm's discovery refuses the expired token
  // (on a real node the step's own check names the join-token to replace first: unit test runOnce.test.ts).
  expect(second.resources.find((r) => r.name === "e2e-worker-1-join")?.error).toContain('could not find a JWS signature in the cluster-info ConfigMap for token ID');
  // A worker's material is its join wave's (one token for the wave): that is the resource to replace.
  const urn = first.engine.steps.find((s) => s.name === "e2e-workers_1-join-material")?.urn as string;
  const third = await run(stack, "apply", [], { replace: [urn] });
  expect({ ok: third.ok, errors: third.errors }).toEqual({ ok: true, errors: [] });
  // The engine's replacement: the new material first, then the old resource's delete, which runs
  // nothing (a wave's steps have no delete).
  expect(third.resources.filter((r) => r.name === "e2e-workers_1-join-material").map((r) => r.op)).toEqual(["create-replacement", "replace", "delete-replaced"]);
  // (No reset before it: the node held a kubelet.conf before the first attempt, so it is never reset.)
  expect(kubeadmEvents().filter((e) => e.startsWith("worker-1 "))).toEqual(["worker-1 kubeadm join"]);
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "worker-1"]);
  // The material is stable: the next apply runs nothing.
  const fourth = await run(stack);
  expect(fourth.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual([]);
});

test("a label dropped from the stack is removed from the Node; a joined node's kubelet flags change nothing", async () => {
  const nodes = (labels: Record<string, string>, extra: Partial<TestNode> = {}): TestNode[] => [
    { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"], labels, ...extra },
  ];
  const stack = (labels: Record<string, string>, extra: Partial<TestNode> = {}) => writeStack("labels", "v1.34.2", nodes(labels, extra));
  await labUp(stack({ "example.com/tier": "a", "example.com/old": "x" }));
  expect((await run(stack({ "example.com/tier": "a", "example.com/old": "x" }))).ok).toBe(true);
  expect(storeNodes()["cp-1"]?.metadata.labels["example.com/old"]).toBe("x");
  const second = await run(stack({ "example.com/tier": "b" }, { kubeletExtraArgs: [{ name: "node-ip", value: "127.0.0.110" }] }));
  expect(second.ok).toBe(true);
  expect(second.resources.filter((r) => r.ran.length > 0).map((r) => r.name)).toEqual(["e2e-cp-1-node-metadata"]);
  const labels = storeNodes()["cp-1"]?.metadata.labels ?? {};
  expect([labels["example.com/old"], labels["example.com/tier"]]).toEqual([undefined, "b"]);
  expect(storeNodes()["cp-1"]?.metadata.annotations["kubeadm.pulumi.com/labels"]).toBe("example.com/tier");
});

test("a machine whose hostname is not its Node name: every step targets the Node name (join, upgrade, drain, uncordon)", async () => {
  const nodes: TestNode[] = [
    { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
    { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"], hostname: "machine-7" },
  ];
  const at = (version: string) => writeStack("hostname", version, nodes, LAB_INSTALLS);
  await labUp(at("v1.33.2"));
  const made = await run(at("v1.33.2"));
  expect({ ok: made.ok, errors: made.errors, failed: made.resources.filter((r) => !r.ok).map((r) => r.name) }).toEqual({ ok: true, errors: [], failed: [] });
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "worker-1"]);
  // kubeadm registered the Node under its configured name, not the hostname.
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).toContain("--hostname-override=worker-1");
  const upgraded = await run(at("v1.34.2"));
  expect({ ok: upgraded.ok, errors: upgraded.errors, failed: upgraded.resources.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`) }).toEqual({ ok: true, errors: [], failed: [] });
  expect([...upgraded.log, ...upgraded.engine.diagnostics].join("\n")).toContain("drained: kubelet v1.33.2 -> v1.34.2");
  const worker = storeNodes()["worker-1"] as unknown as { spec: { unschedulable?: boolean }; status: { nodeInfo: { kubeletVersion: string } } };
  expect({ unschedulable: worker.spec.unschedulable ?? false, kubelet: worker.status.nodeInfo.kubeletVersion }).toEqual({ unschedulable: false, kubelet: "v1.34.2" });
  expect(Object.keys(storeNodes()).sort()).toEqual(["cp-1", "worker-1"]);
});

test("a kubelet that fails after its files changed (gate toggle): the kubelet step restores the files and fails naming the node; the re-run finishes with the same snapshot", async () => {
  const nodes: TestNode[] = [
    { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
    { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
  ];
  const at = (gate: boolean) => writeStack("kubelet-unhealthy", "v1.33.2", nodes, { "kubeadm:featureGates": { NodeLocalCRISocket: gate } });
  await labUp(at(false));
  const made = await run(at(false));
  expect({ ok: made.ok, errors: made.errors }).toEqual({ ok: true, errors: [] });
  const flagsBefore = nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env");
  const configBefore = nodeFile("worker-1", "/var/lib/kubelet/config.yaml");
  expect(flagsBefore).toContain(`--container-runtime-endpoint=${CONTAINERD}`);
  writeFileSync(hostPathOf(LAB_DIR, "worker-1", "/etc/lab-node/fail-once"), "kubelet-start\n");

  const first = await run(at(true));
  expect(first.ok).toBe(false);
  const failed = first.resources.filter((r) => !r.ok);
  expect(failed.map((r) => r.name)).toEqual(["e2e-worker-1-kubelet"]);
  expect(failed[0]?.error).toContain("pulumi-kubeadm: node worker-1: the kubelet was unhealthy after its files changed; the files this step changed were restored from their backups and the kubelet restarted");
  // The files are as they were, and the kubelet runs on them.
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).toBe(flagsBefore);
  expect(nodeFile("worker-1", "/var/lib/kubelet/config.yaml")).toBe(configBefore);
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBeUndefined();
  expect(JSON.parse(nodeFile("worker-1", "/etc/lab-node/kubelet.json") ?? "{}").state).toBe("active");

  // The re-run: only the kubelet step (and what follows it) runs on worker-1, from the upgrade step's
  // snapshot of the first run: one session there.
  const second = await run(at(true));
  expect({ ok: second.ok, errors: second.errors, failed: second.resources.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`) }).toEqual({ ok: true, errors: [], failed: [] });
  expect(second.resources.filter((r) => r.name.startsWith("e2e-worker-1-") && r.ran.length > 0).map((r) => r.name)).toEqual(["e2e-worker-1-kubelet", "e2e-worker-1-node-metadata"]);
  expect(second.nodeSessions["worker-1"]).toBe(1);
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).not.toContain("--container-runtime-endpoint");
  expect(JSON.parse(nodeFile("worker-1", "/etc/lab-node/kubelet.json") ?? "{}").state).toBe("active");
  expect(kubeadmEvents().filter((e) => e.includes(" kubeadm upgrade "))).toEqual([]);
});

test("a kubelet that fails after its files changed in an upgrade that turns the gate on: only the kubelet step's changes are restored (instance-config.yaml stays as upgrade wrote it and kubeadm read it); the re-run ends with every file as wanted", async () => {
  const nodes: TestNode[] = [
    { name: "cp-1", role: "control-plane", criSocket: CONTAINERD, runtimes: ["containerd"] },
    { name: "worker-1", role: "worker", criSocket: CONTAINERD, runtimes: ["containerd"] },
  ];
  const at = (version: string, gate: boolean) => writeStack("kubelet-unhealthy-upgrade", version, nodes, { ...LAB_INSTALLS, "kubeadm:featureGates": { NodeLocalCRISocket: gate } });
  await labUp(at("v1.33.2", false));
  const made = await run(at("v1.33.2", false));
  expect({ ok: made.ok, errors: made.errors }).toEqual({ ok: true, errors: [] });
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBeUndefined();
  writeFileSync(hostPathOf(LAB_DIR, "worker-1", "/etc/lab-node/fail-once"), "kubelet-start\n");

  const first = await run(at("v1.34.2", true));
  expect(first.ok).toBe(false);
  const failed = first.resources.filter((r) => !r.ok);
  expect(failed.map((r) => r.name)).toEqual(["e2e-worker-1-kubelet"]);
  // The files as the upgrade step and kubeadm 1.34 left them: the instance config kubeadm read (the
  // old code removed it again), the flag kubeadm keeps while that file exists; the kubelet runs on them.
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).toContain(`--container-runtime-endpoint=${CONTAINERD}`);
  expect(JSON.parse(nodeFile("worker-1", "/etc/lab-node/kubelet.json") ?? "{}").state).toBe("active");
  expect(failed[0]?.error).toContain(
    "pulumi-kubeadm: node worker-1: the kubelet was unhealthy after its files changed and its upgrade to v1.34.2; the files this step changed were restored from their backups and the kubelet restarted",
  );
  const upgrades = kubeadmEvents().filter((e) => e.includes(" kubeadm upgrade "));

  // The re-run: only the kubelet step (and what follows it) runs on worker-1, with the same stdin.
  const second = await run(at("v1.34.2", true));
  expect({ ok: second.ok, errors: second.errors, failed: second.resources.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`) }).toEqual({ ok: true, errors: [], failed: [] });
  expect(second.resources.filter((r) => r.name.startsWith("e2e-worker-1-") && r.ran.length > 0).map((r) => r.name)).toEqual(["e2e-worker-1-kubelet", "e2e-worker-1-node-metadata"]);
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).not.toContain("--container-runtime-endpoint");
  expect(nodeFile("worker-1", "/var/lib/kubelet/config.yaml")).toContain(`containerRuntimeEndpoint: ${CONTAINERD}`);
  expect(JSON.parse(nodeFile("worker-1", "/etc/lab-node/kubelet.json") ?? "{}").state).toBe("active");
  expect((storeNodes()["worker-1"] as unknown as { status: { nodeInfo: { kubeletVersion: string } } }).status.nodeInfo.kubeletVersion).toBe("v1.34.2");
  expect(kubeadmEvents().filter((e) => e.includes(" kubeadm upgrade "))).toEqual(upgrades);
});
