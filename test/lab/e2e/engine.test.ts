/**
 * The root program on the REAL Pulumi CLI and engine (local backend, passphrase secrets), on the lab's
 * nodes: what `pulumi up`, `preview --expect-no-changes`, an upgrade preview, `stack export`,
 * `refresh` and `destroy` really do. The example stack's shape: three control-plane nodes, two
 * workers, one of them on CRI-O.
 */
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import { REPO_ROOT } from "../nodes";
import { join } from "path";
import { CRIO, LAB_DIR, LAB_INSTALL, MIXED, kubeadmEvents, labDown, labUp, nodeAddress, nodeFile, run, said, writeStack, E2E_TEST_LIMIT_MS } from "./helpers";
import { exportStackAsStored } from "../engine/stack";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

const stack = (version: string) => writeStack("engine", version, MIXED, { "kubeadm:installCommand": LAB_INSTALL });
const total = (sessions: Record<string, number>) => Object.values(sessions).reduce((a, b) => a + b, 0);

test("pulumi up provisions; preview --expect-no-changes passes; a second up opens no SSH session", async () => {
  await labUp(stack("v1.34.2"));
  // The first preview of a new cluster: its plan output names init and every join (the component's record
  // is still to be created, so it does not read back as "nothing to change"), and no node is dialled.
  const preview = await run(stack("v1.34.2"), "preview");
  expect(preview.ok).toBe(true);
  expect(total(preview.sshSessions)).toBe(0);
  const planned = (preview.engine.outputs["plan"] ?? []) as string[];
  expect(planned.map((l) => /^node "([^"]+)" \([a-z-]+\): (kubeadm (?:init|join(?: --control-plane)?)) v1\.34\.2/.exec(l)?.slice(1, 3).join(" "))).toEqual([
    "cp-1 kubeadm init",
    "cp-2 kubeadm join --control-plane",
    "cp-3 kubeadm join --control-plane",
    "worker-1 kubeadm join",
    "worker-2 kubeadm join",
  ]);
  const first = await run(stack("v1.34.2"));
  expect({ ok: first.ok, errors: first.errors, failed: first.resources.filter((r) => !r.ok) }).toEqual({ ok: true, errors: [], failed: [] });
  expect(first.engine.changes["create"]).toBeGreaterThan(30);
  expect(first.resources.every((r) => r.op === "create")).toBe(true);
  // SSH sessions (issue 10): 2 on every other node (prepare, join; its unit runs nothing when it joins).
  // On cp-1: its own 3 (prepare, init, node-metadata, which also reads the admin kubeconfig; the
  // kubeadm-config read and edit run nothing after init), 2 per control-plane join (join-token,
  // node-metadata), 2 per worker join wave (join-material, the wave's node-metadata; the workers' own
  // join-token and node-metadata run nothing) and 1 for the members record's node list: 3 + 2*2 + 2*1 + 1.
  // Before join waves, 2 per worker instead of per wave; before cp-1's node-metadata read the admin
  // kubeconfig, 4 of its own (a kubeconfig step).
  const at = (i: number) => `${nodeAddress(i)}:22`;
  expect(first.sshSessions).toEqual({ [at(0)]: 3 + 2 * 2 + 2 * 1 + 1, [at(1)]: 2, [at(2)]: 2, [at(3)]: 2, [at(4)]: 2 });
  // The admin kubeconfig is the Cluster's secret output, read by cp-1's node-metadata, whose stderr
  // (kubectl's messages) is logged and whose stdout is not.
  const clientKey = /client-key-data: (\S+)/.exec(nodeFile("cp-1", "/etc/kubernetes/admin.conf")!)![1]!;
  expect(said(first)).not.toContain(clientKey);
  expect(first.engine.outputs["kubeconfig"]).toBe("[secret]");
  expect(kubeadmEvents().filter((e) => / kubeadm (init|join)$/.test(e)).sort()).toEqual([
    "cp-1 kubeadm init",
    "cp-2 kubeadm join",
    "cp-3 kubeadm join",
    "worker-1 kubeadm join",
    "worker-2 kubeadm join",
  ]);

  const check = await run(stack("v1.34.2"), "preview", [], { expectNoChanges: true });
  expect({ ok: check.ok, error: check.engine.error, steps: check.engine.steps.filter((s) => s.op !== "read").map((s) => `${s.name}:${s.op}`) }).toEqual({ ok: true, error: undefined, steps: [] });
  expect(total(check.sshSessions)).toBe(0);

  const second = await run(stack("v1.34.2"));
  expect(second.ok).toBe(true);
  expect(second.resources).toEqual([]);
  expect(second.engine.changes["same"]).toBeGreaterThan(30);
  expect(second.sshSessions).toEqual({});
});

test("upgrade preview (one minor up): only updates, nothing whose delete is destructive is replaced or deleted; the plan says the same", async () => {
  const preview = await run(stack("v1.35.0"), "preview");
  expect(preview.ok).toBe(true);
  // Nothing that has a delete command (reset, drain, node removal) is replaced or deleted...
  const destructive = preview.engine.steps.filter((s) => s.oldDelete && s.op !== "update" && s.op !== "read");
  expect(destructive.map((s) => `${s.name}:${s.op}`)).toEqual([]);
  // ...and nothing else either (`read`: the program's StackReference to its own stack, on every run).
  const ops = new Set(preview.engine.steps.filter((s) => s.op !== "read").map((s) => s.op));
  expect([...ops].filter((op) => op !== "update")).toEqual([]);
  expect(preview.engine.steps.map((s) => s.name)).toEqual(expect.arrayContaining(["e2e-cp-1-upgrade", "e2e-worker-2-upgrade"]));
  const plan = (preview.engine.outputs["plan"] ?? []) as string[];
  expect(plan.length).toBeGreaterThan(0);
  expect(plan.join("\n")).toContain("kubeadm upgrade apply v1.35.0");
  expect(plan.join("\n")).not.toMatch(/kubeadm reset|delete node/);
  expect(total(preview.sshSessions)).toBe(0);
  // `--diff` reads as the change, in words: the step's node and values; no script text.
  keep("preview-upgrade.txt", preview.engine.output);
  expectReadableDiff(preview.engine.output);
  expect(preview.engine.output).toMatch(/^\s+pulumi-kubeadm step upgrade on node worker-2\n\s*- kubernetesVersion: v1\.34\.2\n\s*\+ kubernetesVersion: v1\.35\.0\n\s+criSocket: unix:\/\/\/var\/run\/crio\/crio\.sock\n/m);
});

test("preview --diff of a criSocket change names the node, the step and the sockets, and quotes no script", async () => {
  const switched = MIXED.map((n) => (n.name === "worker-1" ? { ...n, criSocket: CRIO, runtimes: ["containerd", "crio"] } : n));
  const preview = await run(writeStack("engine", "v1.34.2", switched, { "kubeadm:installCommand": LAB_INSTALL }), "preview");
  keep("preview-crisocket.txt", preview.engine.output);
  expect(preview.ok).toBe(true);
  expectReadableDiff(preview.engine.output);
  expect(preview.engine.output).toMatch(/^\s+pulumi-kubeadm step upgrade on node worker-1\n\s+kubernetesVersion: v1\.34\.2\n\s*- criSocket: unix:\/\/\/run\/containerd\/containerd\.sock\n\s*\+ criSocket: unix:\/\/\/var\/run\/crio\/crio\.sock\n/m);
  expect(total(preview.sshSessions)).toBe(0);
  stack("v1.34.2");
});

/** Keep what the CLI printed, for people to read, in <repo>/tmp/e2e/ (the lab folder goes at the end). */
function keep(file: string, text: string): void {
  mkdirSync(join(REPO_ROOT, "tmp", "e2e"), { recursive: true });
  writeFileSync(join(REPO_ROOT, "tmp", "e2e", file), text);
}

/** A `pulumi preview --diff` with changed steps whose scripts are hidden and whose bodies never show. */
function expectReadableDiff(output: string): void {
  expect(output).toMatch(/\bcreate \(hidden\)/);
  for (const script of ["set -euo pipefail", "PK_NODE=", "pk_fail", "bash -c", "pulumi-kubeadm/lib/"]) {
    expect({ script, shown: output.includes(script) }).toEqual({ script, shown: false });
  }
}

test("pulumi stack export holds no bootstrap token, certificate key, private key or kubeconfig in plain text", async () => {
  const exported = JSON.stringify(exportStackAsStored(LAB_DIR, "engine"));
  const store = JSON.parse(readFileSync(join(LAB_DIR, "cluster", "store.json"), "utf8"));
  const tokens = (store.tokens as Array<{ id: string; secret: string }>).map((t) => `${t.id}.${t.secret}`);
  expect(tokens.length).toBeGreaterThan(0);
  const secrets: Record<string, string> = {
    certificateKey: store.certs.key,
    // A line from the middle of the key: the first lines of every ed25519 key are the same header.
    privateKey: readFileSync(join(LAB_DIR, "ssh", "id_ed25519"), "utf8").split("\n")[3]!,
    kubeconfigClientKey: /client-key-data: (\S+)/.exec(nodeFile("cp-1", "/etc/kubernetes/admin.conf")!)![1]!,
  };
  tokens.forEach((t, i) => (secrets[`token${i}`] = t));
  for (const [what, value] of Object.entries(secrets)) {
    expect(value.length).toBeGreaterThan(10);
    expect({ what, found: exported.includes(value) }).toEqual({ what, found: false });
  }
  // The export does hold them, encrypted: the secrets are in state, not dropped.
  expect(exported).toContain("ciphertext");
});

test("pulumi refresh runs no node script; pulumi destroy resets the nodes in reverse order", async () => {
  const refreshed = await run(stack("v1.34.2"), "refresh");
  expect(refreshed.ok).toBe(true);
  expect(refreshed.sshSessions).toEqual({});

  const before = kubeadmEvents().length;
  const destroyed = await run(stack("v1.34.2"), "destroy");
  expect({ ok: destroyed.ok, errors: destroyed.errors }).toEqual({ ok: true, errors: [] });
  const resets = kubeadmEvents()
    .slice(before)
    .filter((e) => e.endsWith(" kubeadm reset"))
    .map((e) => e.split(" ")[0]);
  expect(new Set(resets)).toEqual(new Set(MIXED.map((n) => n.name)));
  // Workers before control-plane nodes; the first control-plane node (it ran init) last.
  const lastWorker = Math.max(resets.indexOf("worker-1"), resets.indexOf("worker-2"));
  expect(lastWorker).toBeLessThan(Math.min(resets.indexOf("cp-2"), resets.indexOf("cp-3")));
  expect(resets[resets.length - 1]).toBe("cp-1");
});
