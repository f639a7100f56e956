/**
 * The kubeadm-config write step refuses a ConfigMap that changed since its read step read it, and says
 * how to read it anew: a plain re-run writes from the same recorded read.
 */
import { clusterConfig, clusterConfigRead, clusterConfigScripts, encodeClusterConfigChange, parseKubeadmConfigMap } from "../../../components/steps/clusterConfig";
import type { StepContext } from "../../../components/steps/kind";
import { runBash, sandbox } from "./bash";

const READ = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kubeadm-config", namespace: "kube-system", resourceVersion: "7" }, data: { ClusterConfiguration: "kubernetesVersion: v1.34.2\n" } });
const stdin = encodeClusterConfigChange(parseKubeadmConfigMap(READ), "kubernetesVersion: v1.34.2\nfeatureGates:\n  NodeLocalCRISocket: false\n");
const script = clusterConfigScripts("cp1", "c-cp1-cluster-config-read").create;

/** kubectl over a ConfigMap whose ClusterConfiguration is `current`; `replace` exits with `replaceStatus`. */
function kubectl(current: string, replaceStatus = 0) {
  const box = sandbox();
  box.stub("kubectl", `shift 2; case "$1" in get) printf '%b' ${JSON.stringify(current)} ;; replace) cat >/dev/null; exit ${replaceStatus} ;; esac`);
  return box;
}

test("cluster-config: replaces the ConfigMap still as read; refuses one changed since, naming the read step to replace", () => {
  const asRead = kubectl("kubernetesVersion: v1.34.2\n");
  expect(runBash(script, { stdin, bin: asRead.bin, state: asRead.state }).stdout).toBe("kubeadm-config: replaced\n");
  const changed = kubectl("kubernetesVersion: v1.34.2\nclusterName: other\n");
  const refused = runBash(script, { stdin, bin: changed.bin, state: changed.state });
  expect(refused.status).toBe(1);
  expect(refused.stderr).toContain(
    "pulumi-kubeadm: node cp1: kubeadm-config changed since it was read; run pulumi up --replace <URN of c-cp1-cluster-config-read>, which reads it anew (a plain pulumi up writes from the same read again)",
  );
  const conflict = kubectl("kubernetesVersion: v1.34.2\n", 1);
  expect(runBash(script, { stdin, bin: conflict.bin, state: conflict.state }).stderr).toContain("a conflict means it changed since it was read: run pulumi up --replace <URN of c-cp1-cluster-config-read>");
});

test("cluster-config-read runs again whenever the write step's script changes (a cluster rename, a new package version): the write never compares against a read made before the last kubeadm upgrade apply", () => {
  // Only what the two kinds' scripts read of their context.
  const ctx = (cluster: string) =>
    ({ cluster: { version: { text: "v1.34.2" }, kubeadmFeatureGates: {} }, node: { name: "cp1" }, resourceName: (id: string) => `${cluster}-${id}` }) as unknown as StepContext;
  // A rename changes the write step's script (its refusal names the read step)...
  expect(clusterConfig.scripts(ctx("prod2"), "").create).not.toBe(clusterConfig.scripts(ctx("prod"), "").create);
  // ...so the read step's script changes with it: the read runs again before the write does.
  expect(clusterConfigRead.scripts(ctx("prod2"), "").create).not.toBe(clusterConfigRead.scripts(ctx("prod"), "").create);
});

test("cluster-config with nothing read (its read step ran no command: the cluster was made in that run) writes nothing and succeeds, whatever made it run again", () => {
  const box = kubectl("kubernetesVersion: v1.34.2\n");
  const r = runBash(script, { stdin: "", bin: box.bin, state: box.state });
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: "kubeadm-config: nothing read (kubeadm init wrote it as asked), nothing to write\n" });
  // A partial input still fails.
  const partial = runBash(script, { stdin: "original abc\n", bin: box.bin, state: box.state });
  expect(partial.status).toBe(1);
  expect(partial.stderr).toContain("cluster-config: incomplete input");
});
