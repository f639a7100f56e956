/**
 * The Cluster's kubernetes Provider on the REAL Pulumi engine and the REAL pulumi-kubernetes provider
 * plugin (built by tools/install-pulumi.sh; this file is skipped, saying so, when it is not built): an
 * upgrade, which runs the first control-plane node's `node-metadata` again and so leaves the Provider's
 * kubeconfig unknown at preview, plans an update of the Provider, not a replacement of it and of every
 * resource on it. pulumi-kubernetes' DiffConfig plans that replacement for an unknown kubeconfig unless
 * the Provider's `clusterIdentifier` is set and unchanged, which the component sets.
 *
 * The lab's API server is a stand-in (a file, no process), so the Provider configures against a cluster
 * it cannot reach (pulumi-kubernetes allows that); what is tested is the engine's plan for the Provider.
 */
import { E2E_TEST_LIMIT_MS, LAB_INSTALLS, labDown, labUp, nodeFile, ok, run, writeStack } from "./helpers";
import { kubernetesPluginBinary } from "../engine/plugin";
import { stackOutputRevealed } from "../engine/stack";
import { LAB_DIR } from "./helpers";
import type { E2eRun } from "./helpers";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);

const PROVIDER = "pulumi:providers:kubernetes";
const built = kubernetesPluginBinary() !== undefined;
if (!built) console.warn("provider.test.ts skipped: the pulumi-kubernetes plugin is not built (bash tools/install-pulumi.sh builds it)");

const stack = (version: string) =>
  writeStack("provider", version, [{ name: "cp-1", role: "control-plane", criSocket: "unix:///run/containerd/containerd.sock", runtimes: ["containerd"] }], {
    ...LAB_INSTALLS,
    "kubeadm:kubernetesProvider": true,
  });

/** The engine's operations on the Provider in a run, e.g. `["update"]`. */
const providerOps = (r: E2eRun) => r.engine.steps.filter((s) => s.type === PROVIDER).map((s) => s.op);

(built ? test : test.skip)("an upgrade updates the Cluster's kubernetes Provider in place: the preview plans no replacement, the up replaces nothing", async () => {
  await labUp(stack("v1.34.2"));
  const made = await run(stack("v1.34.2"));
  ok(made);
  expect(providerOps(made)).toEqual(["create"]);

  const preview = await run(stack("v1.35.0"), "preview");
  expect(preview.ok).toBe(true);
  // The kubeconfig is unknown at preview (cp-1's node-metadata runs again after the upgrade); without
  // clusterIdentifier pulumi-kubernetes answers "replace" (the CLI's `+-pulumi:providers:kubernetes`).
  const planned = preview.engine.steps.filter((s) => s.type === PROVIDER);
  expect(planned.map((s) => ({ op: s.op, diffs: s.diffs, replaceKeys: s.replaceKeys ?? [] }))).toEqual([{ op: "update", diffs: ["kubeconfig"], replaceKeys: [] }]);

  const upgraded = await run(stack("v1.35.0"));
  ok(upgraded);
  expect(providerOps(upgraded)).toEqual(["update"]);
  expect(upgraded.engine.changes["replace"] ?? 0).toBe(0);
  // The Provider's kubeconfig is the one the upgrade left on the node (kubeadm upgrade apply renews the
  // admin certificate), as the Cluster's output says.
  expect(stackOutputRevealed(LAB_DIR, "provider", "kubeconfig")).toBe(nodeFile("cp-1", "/etc/kubernetes/admin.conf")!.replace(/\n$/, ""));
});
