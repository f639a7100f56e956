/**
 * Upgrades and the NodeLocalCRISocket toggle on the lab, the real root program over real SSH: after
 * every step, on every node, the checks the upstream kubeadm e2e test makes (annotation, instance
 * config, flag) match kubeadm-facts.md; the kubeadm-config ConfigMap holds the gate as asked; no node
 * is upgraded twice.
 */
import { readFileSync, rmSync, writeFileSync } from "fs";
import { join } from "path";
import { parse, stringify } from "yaml";
import { hostPathOf } from "../nodes";
import { CONTAINERD, LAB_DIR, LAB_INSTALLS, MIXED, MIXED_ENDPOINTS, clusterConfiguration, cordonedNodes, criStates, expectedCriStates, kubeadmEvents, labDown, labUp, nodeFile, run, storeNodes, writeStack, E2E_TEST_LIMIT_MS } from "./helpers";
import type { E2eRun } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

const names = MIXED.map((n) => n.name);

function ok(result: E2eRun): void {
  expect({ errors: result.errors, failed: result.resources.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error}`) }).toEqual({ errors: [], failed: [] });
}

function stack(version: string, gates?: Record<string, boolean>): string {
  return writeStack("upgrade", version, MIXED, {
    ...LAB_INSTALLS,
    ...(gates ? { "kubeadm:featureGates": gates } : {}),
  });
}

const upgrades = () => kubeadmEvents().filter((e) => e.includes(" kubeadm upgrade "));
/** SSH sessions of a run on each node other than the first control-plane node (which runs every drain and uncordon too). */
const sessionsOfOthers = (result: E2eRun) => Object.fromEntries(names.slice(1).map((n) => [n, result.nodeSessions[n] ?? 0]));

test("1.33 gate off, toggled on in place, then 1.34, 1.35, 1.36, 1.37", async () => {
  await labUp(stack("v1.33.2", { NodeLocalCRISocket: false }));
  ok(await run(stack("v1.33.2", { NodeLocalCRISocket: false })));
  expect(criStates(names)).toEqual(expectedCriStates(MIXED_ENDPOINTS, false));
  expect(clusterConfiguration()).toMatch(/featureGates:\n\s+NodeLocalCRISocket: false\n/);

  // The toggle on an unchanged 1.33: every node migrated in place, nothing upgraded; every node but the
  // first control-plane node (which also runs the cluster-side steps) opens 3 sessions: prepare, upgrade
  // (the files read again, no kubeadm), kubelet (the files changed, one restart).
  const toggle = await run(stack("v1.33.2", { NodeLocalCRISocket: true }));
  ok(toggle);
  expect(sessionsOfOthers(toggle)).toEqual(Object.fromEntries(names.slice(1).map((n) => [n, 3])));
  expect(criStates(names)).toEqual(expectedCriStates(MIXED_ENDPOINTS, true));
  expect(clusterConfiguration()).toMatch(/featureGates:\n\s+NodeLocalCRISocket: true\n/);
  expect(upgrades()).toEqual([]);
  expect(toggle.resources.filter((r) => r.op === "replace" || r.op === "delete")).toEqual([]);

  // v1.35.0 leaves KUBELET_KUBEADM_ARGS="" on every node here (no flag of its own, no kubeletExtraArgs):
  // kubeadm v1.35.0 could not read that file, v1.35.1 can (kubernetes#136127), so the patch step works.
  for (const version of ["v1.34.2", "v1.35.0", "v1.35.1", "v1.36.1", "v1.37.0"]) {
    // From 1.34 the gate is on by default: drop the explicit entry (1.37 would refuse it anyway).
    const result = await run(stack(version));
    ok(result);
    // Issue 10: a node's upgrade opens 3 sessions on it (prepare, upgrade, kubelet), not 4.
    expect({ version, sessions: sessionsOfOthers(result) }).toEqual({ version, sessions: Object.fromEntries(names.slice(1).map((n) => [n, 3])) });
    expect(result.resources.filter((r) => r.op === "replace" || r.op === "delete")).toEqual([]);
    expect({ version, states: criStates(names) }).toEqual({ version, states: expectedCriStates(MIXED_ENDPOINTS, true) });
    expect(clusterConfiguration()).toContain(`kubernetesVersion: ${version}`);
    expect(clusterConfiguration()).not.toContain("NodeLocalCRISocket");
    for (const n of names) expect({ n, v: (storeNodes()[n] as unknown as { status: { nodeInfo: { kubeletVersion: string } } }).status.nodeInfo.kubeletVersion }).toEqual({ n, v: version });
    if (version === "v1.35.0") {
      const empty = names.filter((n) => nodeFile(n, "/var/lib/kubelet/kubeadm-flags.env") === 'KUBELET_KUBEADM_ARGS=""\n');
      expect(empty).toEqual(names);
    }
  }
  // Each node upgraded once per version step: apply on cp-1, node elsewhere.
  const perNode = (n: string) => upgrades().filter((e) => e.startsWith(`${n} `));
  expect(perNode("cp-1")).toEqual(Array(5).fill("cp-1 kubeadm upgrade apply"));
  for (const n of names.slice(1)) expect(perNode(n)).toEqual(Array(5).fill(`${n} kubeadm upgrade node`));
  // A second apply at the end changes nothing.
  const again = await run(stack("v1.37.0"));
  expect(again.resources.filter((r) => r.ran.length > 0)).toEqual([]);
});

test("1.34 toggled off and back on", async () => {
  await labUp(stack("v1.34.2"));
  ok(await run(stack("v1.34.2")));
  expect(criStates(names)).toEqual(expectedCriStates(MIXED_ENDPOINTS, true));
  const off = await run(stack("v1.34.2", { NodeLocalCRISocket: false }));
  ok(off);
  expect(criStates(names)).toEqual(expectedCriStates(MIXED_ENDPOINTS, false));
  expect(clusterConfiguration()).toMatch(/NodeLocalCRISocket: false/);
  ok(await run(stack("v1.34.2", { NodeLocalCRISocket: true })));
  expect(criStates(names)).toEqual(expectedCriStates(MIXED_ENDPOINTS, true));
  expect(clusterConfiguration()).toMatch(/NodeLocalCRISocket: true/);
  expect(upgrades()).toEqual([]);
  expect(criStates(["worker-1"])["worker-1"]?.instanceConfig).toBe(`containerRuntimeEndpoint: "${CONTAINERD}"\n`);
});

test("a drain that fails on the second worker stops the rollout there; a re-run finishes; no node upgraded twice", async () => {
  const nodes = [...MIXED, { name: "worker-3", role: "worker" as const, criSocket: CONTAINERD, runtimes: ["containerd"] }];
  const at = (version: string) => writeStack("drain", version, nodes, LAB_INSTALLS);
  await labUp(at("v1.33.2"));
  ok(await run(at("v1.33.2")));
  process.env.LAB_DIR = LAB_DIR;
  const { setDrainBlock } = await import("../standin/store");
  await setDrainBlock("worker-2", "Cannot evict pod as it would violate the pod's disruption budget.");

  const first = await run(at("v1.34.2"));
  expect(first.ok).toBe(false);
  const failed = first.resources.filter((r) => !r.ok);
  // worker-2 is the second rollout batch (maxUnavailableWorkers 1: one worker a batch).
  expect(failed.map((r) => r.name)).toEqual(["e2e-batch_2-drain"]);
  expect(failed[0]?.error).toContain("pulumi-kubeadm: node worker-2: drain failed, the node stays cordoned and the rollout stops here");
  expect(failed[0]?.error).toContain("disruption budget");
  const store = storeNodes();
  expect(store["worker-2"]?.spec.unschedulable).toBe(true);
  // kubeadm's order: worker-2's `kubeadm upgrade node` ran before its drain; its kubelet did not change.
  // worker-3 (the next batch) neither drained nor its kubelet touched: its `kubeadm upgrade node` runs
  // beside batch_2's drain, so whether it ran when that drain failed depends on which ended first, and
  // nothing else of its unit did.
  expect(store["worker-3"]?.spec.unschedulable).toBeFalsy();
  const upgraded = upgrades().map((e) => e.split(" ")[0]);
  expect(upgraded.slice(0, 5)).toEqual(["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"]);
  expect(upgraded.slice(5).filter((n) => n !== "worker-3")).toEqual([]);
  expect(nodeFile("worker-2", "/etc/lab-node/kubelet-version")).toBe("v1.33.2\n");
  expect(nodeFile("worker-3", "/etc/lab-node/kubelet-version") ?? "v1.33.2\n").toBe("v1.33.2\n");
  // The component's record is of the last up that finished (this one failed midway): the preview of the
  // re-run still says where the rollout started, and a further minor from a half-upgraded cluster (the
  // control plane at v1.34.2, worker-3 at v1.33.2) is refused at preview, before anything runs.
  const resumed = await run(at("v1.34.2"), "preview");
  expect(resumed.ok).toBe(true);
  expect((resumed.outputs["plan"] as string[]).join("\n")).toContain('node "cp-1" (control-plane): kubeadm upgrade apply v1.34.2 (from v1.33.2;');
  const skipped = await run(at("v1.35.0"), "preview");
  expect(skipped.ok).toBe(false);
  expect([...skipped.errors, ...skipped.engine.diagnostics].join("\n")).toContain("kubernetesVersion: cannot upgrade from v1.33.2 to v1.35.0: kubeadm upgrades one minor version at a time");

  await setDrainBlock("worker-2", undefined);
  const second = await run(at("v1.34.2"));
  ok(second);
  // Every node upgraded once.
  expect(upgrades().map((e) => e.split(" ")[0])).toEqual(["cp-1", "cp-2", "cp-3", "worker-1", "worker-2", "worker-3"]);
  expect(nodeFile("worker-2", "/etc/lab-node/kubelet-version")).toBe("v1.34.2\n");
  expect(Object.values(storeNodes()).map((n) => n.spec.unschedulable ?? false)).toEqual([false, false, false, false, false, false]);
  expect(criStates(["worker-2"])).toEqual({ "worker-2": expectedCriStates({ "worker-2": MIXED_ENDPOINTS["worker-2"] as string }, true)["worker-2"] });
});

// Found by review: a failed batch leaves its members marked as cordoned by this component; a smaller
// maxUnavailableWorkers puts one of them in a later batch. Fails on 5a067a7: the drains counted every other
// mark against the window, so batch_3-drain (worker-3) failed on worker-4's mark on every re-run
// ("maxUnavailableWorkers (1) reached: worker-4 still cordoned"), which only batch_4 could clear.
test("a drain that fails in a batch of two, re-run with maxUnavailableWorkers 1: the marks it left on a later batch hold up no drain; the re-run finishes, nothing left cordoned, no kubeadm twice", async () => {
  const extra = (name: string) => ({ name, role: "worker" as const, criSocket: CONTAINERD, runtimes: ["containerd"] });
  const nodes = [...MIXED, extra("worker-3"), extra("worker-4")];
  const at = (version: string, window: number) => writeStack("shrink", version, nodes, { ...LAB_INSTALLS, "kubeadm:maxUnavailableWorkers": window, "kubeadm:drainTimeoutSeconds": 20 });
  await labUp(at("v1.33.2", 2));
  ok(await run(at("v1.33.2", 2)));
  process.env.LAB_DIR = LAB_DIR;
  const { setDrainBlock } = await import("../standin/store");
  await setDrainBlock("worker-3", "Cannot evict pod as it would violate the pod's disruption budget.");
  const first = await run(at("v1.34.2", 2));
  expect(first.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-batch_2-drain"]);
  // The batch's other member was drained too, and both stay cordoned.
  const sorted = (c: { unschedulable: string[]; marked: string[] }) => ({ unschedulable: [...c.unschedulable].sort(), marked: [...c.marked].sort() });
  expect(sorted(cordonedNodes())).toEqual({ unschedulable: ["worker-3", "worker-4"], marked: ["worker-3", "worker-4"] });
  await setDrainBlock("worker-3", undefined);
  const second = await run(at("v1.34.2", 1));
  ok(second);
  // Each node upgraded once (a batch's members side by side, so in no fixed order).
  expect(upgrades().map((e) => e.split(" ")[0]).sort()).toEqual(nodes.map((n) => n.name).sort());
  expect(cordonedNodes()).toEqual({ unschedulable: [], marked: [] });
  expect(nodes.map((n) => nodeFile(n.name, "/etc/lab-node/kubelet-version"))).toEqual(nodes.map(() => "v1.34.2\n"));
});

test("a worker's kubeadm upgrade runs while the worker ahead finishes its unit: when that worker's kubelet fails, the next one has its kubeadm files and nothing more (not drained, kubelet untouched), the one after it is untouched; a re-run finishes, no node upgraded twice", async () => {
  const nodes = [...MIXED, { name: "worker-3", role: "worker" as const, criSocket: CONTAINERD, runtimes: ["containerd"] }];
  const at = (version: string) => writeStack("lookahead", version, nodes, LAB_INSTALLS);
  await labUp(at("v1.33.2"));
  ok(await run(at("v1.33.2")));
  writeFileSync(hostPathOf(LAB_DIR, "worker-1", "/etc/lab-node/fail-once"), "kubelet-start\n");

  const first = await run(at("v1.34.2"));
  expect(first.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual(["e2e-worker-1-kubelet"]);
  // Fails on 73a2577: worker-2's upgrade waited for worker-1's whole unit, so it had not run.
  expect(upgrades().map((e) => e.split(" ")[0])).toEqual(["cp-1", "cp-2", "cp-3", "worker-1", "worker-2"]);
  // The window holds: worker-2's batch drain (which first uncordons worker-1) waits for worker-1's kubelet; worker-1 stays cordoned.
  const ran = (name: string) => (first.resources.find((r) => r.name === name)?.ran.length ?? 0) > 0;
  expect({ drain2: ran("e2e-batch_2-drain"), kubelet2: ran("e2e-worker-2-kubelet"), upgrade3: ran("e2e-worker-3-upgrade") }).toEqual({ drain2: false, kubelet2: false, upgrade3: false });
  const store = storeNodes();
  expect([store["worker-1"]?.spec.unschedulable ?? false, store["worker-2"]?.spec.unschedulable ?? false, store["worker-3"]?.spec.unschedulable ?? false]).toEqual([true, false, false]);
  expect([nodeFile("worker-2", "/etc/lab-node/kubeadm-version"), nodeFile("worker-2", "/etc/lab-node/kubelet-version")]).toEqual(["v1.34.2\n", "v1.33.2\n"]);
  expect(nodeFile("worker-3", "/etc/lab-node/kubeadm-version")).toBe("v1.33.2\n");

  const second = await run(at("v1.34.2"));
  ok(second);
  expect(upgrades().map((e) => e.split(" ")[0])).toEqual(["cp-1", "cp-2", "cp-3", "worker-1", "worker-2", "worker-3"]);
  expect(["worker-1", "worker-2", "worker-3"].map((n) => nodeFile(n, "/etc/lab-node/kubelet-version"))).toEqual(["v1.34.2\n", "v1.34.2\n", "v1.34.2\n"]);
  expect(Object.values(storeNodes()).map((n) => n.spec.unschedulable ?? false)).toEqual([false, false, false, false, false, false]);
});

/**
 * `failing`'s kubeadm package install fails (once: the marker says it did) while `ahead`, the node whose
 * drain its upgrade runs beside, is still in its unit: `failing`'s install waits until `ahead`'s kubelet
 * package install began (so `ahead` is drained: the drain and the upgrade start together, and which ends
 * first is up to the machine), and `ahead`'s waits until the failure happened (no time limit on either:
 * nothing races the clock), as on real machines, where a drain and a kubelet step (restart, settle, Ready)
 * take far longer than a failing package install. The rollout stops there: `ahead`'s kubelet step was
 * under way and finishes, its node-metadata (the uncordon) never starts, so it stays cordoned until the
 * re-run, which finishes it and runs no kubeadm twice.
 * @param uncordon the step that uncordons `ahead`: a control-plane node's `node-metadata`, a worker's the next batch's `drain`.
 */
async function failsWhileAheadFinishes(stackName: string, ahead: string, uncordon: string, failing: string): Promise<void> {
  const nodes = [...MIXED, { name: "worker-3", role: "worker" as const, criSocket: CONTAINERD, runtimes: ["containerd"] }];
  const failed = join(LAB_DIR, `${failing}-kubeadm-install-failed`);
  const drained = join(LAB_DIR, `${ahead}-kubelet-install-began`);
  rmSync(failed, { force: true });
  rmSync(drained, { force: true });
  const installs: Record<string, Record<string, string>> = {
    [ahead]: { kubeletInstallCommand: `touch ${drained}; until [ -f ${failed} ]; do sleep 0.1; done; echo v{version} >/etc/lab-node/kubelet-version` },
    [failing]: { kubeadmInstallCommand: `if [ ! -f ${failed} ]; then until [ -f ${drained} ]; do sleep 0.1; done; touch ${failed}; exit 1; fi; ${LAB_INSTALLS["kubeadm:kubeadmInstallCommand"]}` },
  };
  const at = (version: string) => {
    const file = writeStack(stackName, version, nodes, LAB_INSTALLS);
    const doc = parse(readFileSync(file, "utf8"));
    doc.config["kubeadm:nodes"] = doc.config["kubeadm:nodes"].map((n: { name: string }) => ({ ...n, ...installs[n.name] }));
    writeFileSync(file, stringify(doc));
    return file;
  };
  await labUp(at("v1.33.2"));
  ok(await run(at("v1.33.2")));

  const first = await run(at("v1.34.2"));
  expect(first.resources.filter((r) => !r.ok).map((r) => r.name)).toEqual([`e2e-${failing}-upgrade`]);
  const ran = (name: string) => (first.resources.find((r) => r.name === name)?.ran.length ?? 0) > 0;
  expect({ kubelet: ran(`e2e-${ahead}-kubelet`), uncordon: ran(`e2e-${uncordon}`) }).toEqual({ kubelet: true, uncordon: false });
  const cordoned = () => nodes.filter((n) => storeNodes()[n.name]?.spec.unschedulable === true).map((n) => n.name);
  expect(cordoned()).toEqual([ahead]);
  expect([nodeFile(ahead, "/etc/lab-node/kubelet-version"), nodeFile(failing, "/etc/lab-node/kubeadm-version")]).toEqual(["v1.34.2\n", "v1.33.2\n"]);
  // The first run's kubeadm upgrades: every node up to `ahead`, in the rollout's order, never `failing`'s.
  const upgraded = () => upgrades().map((e) => e.split(" ")[0] as string);
  const firstRun = upgraded();
  const upToAhead = nodes.slice(0, nodes.findIndex((n) => n.name === ahead) + 1).map((n) => n.name);
  expect([firstRun.slice(0, upToAhead.length), firstRun.includes(failing)]).toEqual([upToAhead, false]);

  ok(await run(at("v1.34.2")));
  // The re-run's: each other node once. `failing`'s (retried) and the next batch's run side by side (the
  // next one waits for what the drain of `failing`'s batch waits for, all done in the first run), so in
  // no fixed order (CI saw worker-3's end before worker-2's).
  const all = upgraded();
  expect(all.slice(0, firstRun.length)).toEqual(firstRun);
  expect(all.slice(firstRun.length).sort()).toEqual(nodes.map((n) => n.name).filter((n) => !firstRun.includes(n)).sort());
  expect(cordoned()).toEqual([]);
  expect(nodes.map((n) => nodeFile(n.name, "/etc/lab-node/kubelet-version"))).toEqual(nodes.map(() => "v1.34.2\n"));
}

// On 73a2577 the marker never comes (worker-2's upgrade waited for worker-1's whole unit): worker-1's
// kubelet step waits until the test's time limit.
test("a worker's kubeadm upgrade that fails while the worker ahead finishes its unit: the rollout stops there, so that worker (which did nothing wrong) stays cordoned until the re-run, which finishes it and runs no kubeadm twice", async () => {
  await failsWhileAheadFinishes("lookahead-fails", "worker-1", "batch_2-drain", "worker-2");
});

// The same at the control plane's end: the first worker's upgrade runs once the last control-plane node
// ran its kubeadm upgrade, beside its drain, kubelet restart and uncordon. Before 73a2577 it waited for
// that node's whole unit (the marker never comes: cp-3's kubelet step waits until the test's time limit).
test("the first worker's kubeadm upgrade that fails while the last control-plane node finishes its unit: that node stays cordoned until the re-run, which finishes it and runs no kubeadm twice", async () => {
  await failsWhileAheadFinishes("lookahead-cp-fails", "cp-3", "cp-3-node-metadata", "worker-1");
});

test("a node whose declared runtime is gone (switched by hand): the toggle stops at its prepare step, naming the node and the socket, before any file changes", async () => {
  // worker-1 was switched to CRI-O by hand (flag edited, containerd gone), while the stack still says containerd.
  const nodes = MIXED.map((n) => (n.name === "worker-1" ? { ...n, runtimes: ["containerd", "crio"] } : n));
  const at = (gates: Record<string, boolean>) => writeStack("kubelet-fails", "v1.33.2", nodes, { "kubeadm:featureGates": gates });
  await labUp(at({ NodeLocalCRISocket: false }));
  ok(await run(at({ NodeLocalCRISocket: false })));
  const { runOnNode } = await import("../nodes");
  const crio = "unix:///var/run/crio/crio.sock";
  const sabotage = await runOnNode(
    "worker-1",
    `sed -i 's#--container-runtime-endpoint=[^ "]*#--container-runtime-endpoint=${crio}#' /var/lib/kubelet/kubeadm-flags.env && rm /run/containerd/containerd.sock && systemctl restart kubelet && systemctl is-active kubelet`,
    undefined,
    { labDir: LAB_DIR },
  );
  expect(sabotage.stdout.trim()).toBe("active");
  const flagsBefore = nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env");

  const result = await run(at({ NodeLocalCRISocket: true }));
  expect(result.ok).toBe(false);
  const failed = result.resources.filter((r) => !r.ok);
  expect(failed.map((r) => r.name)).toEqual(["e2e-worker-1-prepare"]);
  expect(failed[0]?.error).toMatch(/worker-1/);
  expect(failed[0]?.error).toMatch(/containerd\.sock/);
  // Nothing on the node changed, and its kubelet still runs on what it had.
  expect(nodeFile("worker-1", "/var/lib/kubelet/kubeadm-flags.env")).toBe(flagsBefore);
  expect(nodeFile("worker-1", "/var/lib/kubelet/instance-config.yaml")).toBeUndefined();
  expect(result.resources.filter((r) => r.name.startsWith("e2e-worker-1-") && r.ran.length > 0 && r.name !== "e2e-worker-1-prepare")).toEqual([]);
  const health = await runOnNode("worker-1", "systemctl is-active kubelet", undefined, { labDir: LAB_DIR });
  expect(health.stdout.trim()).toBe("active");
});

// A joined worker's join-token updates when its script changes (here joinTokenTtl, given in the same up
// as the version): `kubeadm token create` on cp-1, which must not run beside cp-1's `kubeadm upgrade
// apply` (its API server restarts; the lab's endpoint is cp-1 itself). Fails on 0b0d4a0: the three
// tokens ran right after the kubeadm-config edit, during cp-1's upgrade.
test("joinTokenTtl changed in the same up as an upgrade: the joined workers' join-token updates wait for the control plane's upgrade", async () => {
  const nodes = [...MIXED, { name: "worker-3", role: "worker" as const, criSocket: CONTAINERD, runtimes: ["containerd"] }];
  const at = (version: string, ttl: string) => writeStack("ttl", version, nodes, { ...LAB_INSTALLS, "kubeadm:joinTokenTtl": ttl });
  await labUp(at("v1.33.2", "2h0m0s"), { upgradeApply: 2, upgradeNode: 2 });
  ok(await run(at("v1.33.2", "2h0m0s")));
  const result = await run(at("v1.34.2", "3h0m0s"));
  ok(result);
  const tokens = result.engine.steps.filter((s) => /^e2e-worker-\d-join-token$/.test(s.name));
  expect(tokens.map((t) => `${t.name} ${t.op}`).sort()).toEqual(["e2e-worker-1-join-token update", "e2e-worker-2-join-token update", "e2e-worker-3-join-token update"]);
  // Once the last control-plane node ran its kubeadm upgrade (every API server at the target; its drain goes on beside).
  const cpUpgraded = result.engine.steps.find((s) => s.name === "e2e-cp-3-upgrade")?.endedAt as number;
  expect(tokens.filter((t) => t.startedAt < cpUpgraded).map((t) => t.name)).toEqual([]);
});
