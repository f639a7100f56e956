/**
 * The Cluster's kubernetes Provider on the REAL Pulumi engine and the REAL pulumi-kubernetes provider
 * plugin (built by tools/install-pulumi.sh from the newest commit of its Go module the proxy serves):
 * an upgrade, which runs the first control-plane node's `node-metadata` again and so leaves the Provider's
 * kubeconfig unknown at preview, plans an update of the Provider, not a replacement of it and of every
 * resource on it. pulumi-kubernetes' DiffConfig plans that replacement for an unknown kubeconfig unless
 * the Provider's `clusterIdentifier` is set and unchanged, which the component sets since d4f7df7; a
 * stack made before (ea3656d) shows it once, as CHANGELOG says.
 *
 * Skipped, saying so, when the plugin is not built; CI (.ci/run sets PULUMI_KUBEADM_REQUIRE_KUBERNETES_PLUGIN)
 * fails instead, so a green CI run has run these tests.
 *
 * The lab's API server is a stand-in (a file, no process), so the Provider configures against a cluster
 * it cannot reach (pulumi-kubernetes allows that); what is tested is the engine's plan for the Provider.
 */
import { E2E_TEST_LIMIT_MS, LAB_DIR, LAB_INSTALLS, labDown, labUp, nodeFile, ok, run, runCodeFrom, treeAt, writeStack } from "./helpers";
import type { E2eRun } from "./helpers";
import { installKubernetesPlugin, kubernetesPluginBinary } from "../engine/plugin";
import { pulumiPaths } from "../engine/paths";
import { stackOutputRevealed } from "../engine/stack";

jest.setTimeout(E2E_TEST_LIMIT_MS);
afterAll(labDown);
afterEach(() => runCodeFrom(undefined));

/** The last commit whose Provider has no clusterIdentifier. */
const BEFORE_IDENTIFIER = "ea3656d";
const PROVIDER = "pulumi:providers:kubernetes";
const built = kubernetesPluginBinary() !== undefined;
if (!built) {
  const why = "the pulumi-kubernetes plugin is not built (bash tools/install-pulumi.sh builds it)";
  if (process.env["PULUMI_KUBEADM_REQUIRE_KUBERNETES_PLUGIN"]) throw new Error(`provider.test.ts: ${why}, and PULUMI_KUBEADM_REQUIRE_KUBERNETES_PLUGIN is set`);
  console.warn(`provider.test.ts skipped: ${why}`);
}
const maybe = built ? test : test.skip;

const stack = (version: string) =>
  writeStack("provider", version, [{ name: "cp-1", role: "control-plane", criSocket: "unix:///run/containerd/containerd.sock", runtimes: ["containerd"] }], {
    ...LAB_INSTALLS,
    "kubeadm:kubernetesProvider": true,
  });

/** The engine's operations on the Provider in a run, e.g. `["update"]`. */
const providerOps = (r: E2eRun) => r.engine.steps.filter((s) => s.type === PROVIDER).map((s) => s.op);
/** The same, with the properties the engine said changed. */
const providerPlan = (r: E2eRun) => r.engine.steps.filter((s) => s.type === PROVIDER).map((s) => ({ op: s.op, diffs: [...(s.diffs ?? [])].sort() }));

maybe("an upgrade updates the Cluster's kubernetes Provider in place: the preview plans no replacement, the up replaces nothing", async () => {
  await labUp(stack("v1.34.2"));
  const made = await run(stack("v1.34.2"));
  ok(made);
  expect(providerOps(made)).toEqual(["create"]);

  const preview = await run(stack("v1.35.0"), "preview");
  expect(preview.ok).toBe(true);
  // The kubeconfig is unknown at preview (cp-1's node-metadata runs again after the upgrade); without
  // clusterIdentifier pulumi-kubernetes answers "replace" (the next test shows it).
  expect(providerPlan(preview)).toEqual([{ op: "update", diffs: ["kubeconfig"] }]);

  const upgraded = await run(stack("v1.35.0"));
  ok(upgraded);
  expect(providerOps(upgraded)).toEqual(["update"]);
  expect(upgraded.engine.changes["replace"] ?? 0).toBe(0);
  // The Provider's kubeconfig is the one the upgrade left on the node (kubeadm upgrade apply renews the
  // admin certificate), as the Cluster's output says.
  expect(stackOutputRevealed(LAB_DIR, "provider", "kubeconfig")).toBe(nodeFile("cp-1", "/etc/kubernetes/admin.conf")!.replace(/\n$/, ""));
});

maybe(`a stack made by ${BEFORE_IDENTIFIER} (no clusterIdentifier): that code plans an upgrade as a replacement of the Provider; this code's first preview shows the replacement once, its up updates the Provider in place`, async () => {
  // That version's lab CLI does not install the kubernetes plugin: the lab's Pulumi home gets it here.
  installKubernetesPlugin(pulumiPaths(LAB_DIR).home);
  runCodeFrom(treeAt(BEFORE_IDENTIFIER));
  await labUp(stack("v1.34.2"));
  ok(await run(stack("v1.34.2")));
  const before = await run(stack("v1.35.0"), "preview");
  expect(before.ok).toBe(true);
  expect(providerOps(before)).toEqual(["create-replacement", "replace", "delete-replaced"]);

  runCodeFrom(undefined);
  const first = await run(stack("v1.34.2"), "preview");
  expect(first.ok).toBe(true);
  // cp-1's node-metadata changed (it now prints the kubeconfig), so the kubeconfig is unknown, and an
  // identifier that is only being added does not stop pulumi-kubernetes from replacing.
  expect(providerOps(first)).toEqual(["create-replacement", "replace", "delete-replaced"]);
  const moved = await run(stack("v1.34.2"));
  ok(moved);
  expect(providerPlan(moved)).toEqual([{ op: "update", diffs: ["clusterIdentifier"] }]);
  expect(moved.engine.changes["replace"] ?? 0).toBe(0);
  const upgrade = await run(stack("v1.35.0"), "preview");
  expect(providerPlan(upgrade)).toEqual([{ op: "update", diffs: ["kubeconfig"] }]);
});
