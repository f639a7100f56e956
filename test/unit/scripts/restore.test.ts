/**
 * A node's upgrade and kubelet steps, for real in bash, when the kubelet is unhealthy after the kubelet
 * step changed its files (found in review): the kubelet step's restore puts back only what the kubelet
 * step changed. The pre-upgrade instance-config.yaml the upgrade step wrote (which kubeadm's upgrade read)
 * stays, so the failure leaves the files as upgrade and kubeadm left them, and the re-run, which runs
 * only the kubelet step with the same stdin, ends with every file as wanted.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { upgradeScripts } from "../../../components/steps/upgrade";
import { KUBELET_JOURNAL_DIR } from "../../../components/steps/kubelet";
import { encodeFileChanges, parseFileSnapshot } from "../../../components/scripts/files";
import { KUBELET_FILES, kubeletFileChanges, preUpgradeFileChanges } from "../../../components/kubeadm/nodeFiles";
import { renderInstanceConfig } from "../../../components/kubeadm/instanceConfig";
import { flagsEnv, kubeadmFiles, kubeletConfigYaml } from "../helpers/kubeadmFiles";
import { runBash, sandbox, sandboxed, kubeletScript } from "./bash";

const CONTAINERD = "unix:///run/containerd/containerd.sock";
const KUBELET_DIR = "/var/lib/kubelet";

test("kubelet unhealthy after its files changed in an upgrade with the gate in effect: only the kubelet step's changes are restored; the re-run ends with every file as wanted", () => {
  const box = sandbox();
  const dir = join(box.dir, "kubelet");
  mkdirSync(dir);
  const onNode = (text: string) => text.split(KUBELET_DIR).join(dir);
  const fromNode = (text: string) => text.split(dir).join(KUBELET_DIR);
  const file = (path: string) => join(dir, path.slice(KUBELET_DIR.length + 1));
  const read = (path: string) => (existsSync(file(path)) ? readFileSync(file(path), "utf8") : undefined);
  // A legacy node at v1.33.2 (the flag in kubeadm-flags.env, no instance-config.yaml), upgraded to
  // v1.34.2 with NodeLocalCRISocket in effect.
  for (const [path, content] of Object.entries(kubeadmFiles(false, CONTAINERD))) if (content !== undefined) writeFileSync(file(path), content);
  writeFileSync(join(box.state, "version"), "v1.33.2\n");
  // kubeadm 1.34 upgrade with instance-config.yaml present: config.yaml takes its endpoint, the flag stays.
  const merged = join(box.dir, "config-merged.yaml");
  writeFileSync(merged, kubeletConfigYaml(CONTAINERD));
  box.stub("kubeadm", `cp ${merged} ${file(KUBELET_FILES.config)}`);
  const healthy = join(box.dir, "healthy");
  box.stub("systemctl", `case "$1" in is-active) [ -f ${healthy} ];; status) echo "kubelet: failed";; esac`);
  box.stub("kubectl", "exit 1");

  const up = upgradeScripts({ node: "w1", version: "v1.34.2", apply: false, wanted: `node-local ${CONTAINERD}`, nodeLocalCriSocket: false }).create;
  // The kubelet files' paths are in lib.sh's values too (PK_KUBELET_FILES, which pk_upgrade_step reports).
  const upgraded = runBash(sandboxed(up, box.dir, onNode), { stdin: onNode(encodeFileChanges(preUpgradeFileChanges(true, CONTAINERD))), bin: box.bin, state: box.state });
  expect(upgraded.status).toBe(0);
  const asKubeadmLeftThem = {
    [KUBELET_FILES.instanceConfig]: renderInstanceConfig(CONTAINERD),
    [KUBELET_FILES.config]: kubeletConfigYaml(CONTAINERD),
    [KUBELET_FILES.flagsEnv]: flagsEnv([`--container-runtime-endpoint=${CONTAINERD}`, "--pod-infra-container-image=registry.k8s.io/pause:3.10"]),
  };
  const files = () => Object.fromEntries(Object.keys(asKubeadmLeftThem).map((p) => [p, read(p)]));
  expect(files()).toEqual(asKubeadmLeftThem);

  // The kubelet step's stdin, from the files the upgrade step reported: only the flag goes.
  const changes = kubeletFileChanges(true, CONTAINERD, parseFileSnapshot(fromNode(upgraded.stdout)));
  expect(changes.map((c) => c.path)).toEqual([KUBELET_FILES.flagsEnv]);
  const stdin = onNode(encodeFileChanges(changes));
  const kl = kubeletScript(false, "true");
  const failed = runBash(kl, { stdin, bin: box.bin, state: box.state });
  expect(failed.status).toBe(1);
  expect(failed.stderr).toContain("pulumi-kubeadm: node w1: the kubelet was unhealthy after its files changed and its upgrade to v1.34.2; the files this step changed were restored");
  // The kubelet's own change undone; upgrade's instance-config.yaml kept: the files as the v1.34 kubeadm left them.
  expect(files()).toEqual(asKubeadmLeftThem);
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.33.2\n");
  // The upgrade step's change stays journaled (the re-run restarts and checks the kubelet); the kubelet step's is undone and forgotten.
  const journals = () => [join(box.state, "pending"), join(box.state, KUBELET_JOURNAL_DIR, "pending")].map(existsSync);
  expect(journals()).toEqual([true, false]);

  // The re-run (`pulumi up` again) runs only the kubelet step, with the same stdin.
  writeFileSync(healthy, "");
  const rerun = runBash(kl, { stdin, bin: box.bin, state: box.state });
  expect(rerun.status).toBe(0);
  expect(rerun.stdout).toBe("files changed: 1; kubelet upgraded to v1.34.2, restarted and healthy\n");
  expect(files()).toEqual({
    [KUBELET_FILES.instanceConfig]: renderInstanceConfig(CONTAINERD),
    [KUBELET_FILES.config]: kubeletConfigYaml(CONTAINERD),
    [KUBELET_FILES.flagsEnv]: flagsEnv(["--pod-infra-container-image=registry.k8s.io/pause:3.10"]),
  });
  expect(readFileSync(join(box.state, "version"), "utf8")).toBe("v1.34.2\n");
  expect(journals()).toEqual([false, false]);
  // Nothing left journaled: a further run changes and restarts nothing.
  expect(runBash(kl, { stdin, bin: box.bin, state: box.state }).stdout).toBe("files changed: 0; kubelet not restarted\n");
});
