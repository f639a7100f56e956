/**
 * TEST DOUBLE, not real kubeadm: `kubeadm reset -f [--cri-socket x]` wipes what kubeadm wipes:
 * /etc/kubernetes/manifests, /etc/kubernetes/pki, /etc/kubernetes/*.conf, the contents of
 * /var/lib/kubelet (instance-config.yaml, config.yaml, kubeadm-flags.env with it) and of /var/lib/etcd,
 * and stops the kubelet. Like real kubeadm it does NOT delete the Node object from the API (the
 * store): `kubectl delete node <name>` does that.
 *
 * The CRI socket, before anything else (kubeadm's newResetData, checked in source): `--cri-socket`;
 * else, when /etc/kubernetes/admin.conf gives a client (control-plane nodes), this node's
 * socket as the cluster records it (annotation or instance config, as upgrade finds it); else
 * kubeadm's detection, which fails with "found multiple CRI endpoints" on a node with two runtimes.
 */
import * as fs from "fs";
import { parse } from "yaml";
import { emptyDir, exists, failOnce, installedVersion, p, parseCli, readLineSync, removePath, stepDuration } from "./common";
import { klogWarning, resolveCriSocket } from "./cluster";
import { featureGatesOf, Obj } from "./kubeadmconfig";
import { registeredNodeName, stopKubelet } from "./kubelet";
import { CRI_SOCKET_ANNOTATION, readStore } from "./store";
import { findSocket } from "./upgrade";
import { kubeadmBool, kubeadmError, nodeLocalCriSocket } from "./versions";

/**
 * This node's CRI socket from the cluster (FetchInitConfigurationFromCluster's node registration), or
 * undefined when there is no admin client or the lookup fails (kubeadm then warns and detects).
 * UNVERIFIED: the warning's wording past its prefix.
 */
async function socketFromCluster(minor: number): Promise<string | undefined> {
  if (!exists("/etc/kubernetes/admin.conf")) return undefined;
  const s = await readStore();
  const cm = s.configMaps["kube-system/kubeadm-config"];
  const node = registeredNodeName();
  const warn = (why: string): undefined => {
    klogWarning("reset.go:141", `[reset] Unable to fetch the kubeadm-config ConfigMap from cluster: ${why}`);
    return undefined;
  };
  if (!cm || !node) return warn(`configmaps "kubeadm-config" not found`);
  try {
    const gates = featureGatesOf(parse(cm.data.ClusterConfiguration) as Obj);
    return findSocket(minor, nodeLocalCriSocket(minor, gates), s.nodes[node]?.metadata.annotations[CRI_SOCKET_ANNOTATION], node);
  } catch (e) {
    return warn(`failed to get node registration: ${(e as Error).message}`);
  }
}

export async function reset(args: string[]): Promise<number> {
  const minor = installedVersion().minor;
  const cli = parseCli(args, ["cri-socket", "ignore-preflight-errors", "cert-dir", "kubeconfig"], { f: "force" });
  const force = kubeadmBool(cli, minor, "force");
  const flag = typeof cli.flags["cri-socket"] === "string" && cli.flags["cri-socket"] !== "" ? cli.flags["cri-socket"] : undefined;
  resolveCriSocket(minor, flag ?? (await socketFromCluster(minor)));
  if (!force) {
    process.stdout.write(`[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.\n[reset] Are you sure you want to proceed? [y/N]: `);
    if (readLineSync().toLowerCase() !== "y") throw kubeadmError(minor, "aborted reset operation");
  }
  await stepDuration("other");
  // Lab fault: this reset fails once, before it changes anything (UNVERIFIED wording).
  failOnce("reset", () => kubeadmError(minor, "lab fault reset: failed to stop the kubelet service (armed by a test)"));
  process.stdout.write(`[preflight] Running pre-flight checks\n[reset] Stopping the kubelet service\n`);
  await stopKubelet();
  process.stdout.write(`[reset] Unmounting mounted directories in "/var/lib/kubelet"\n[reset] Deleting contents of directories: [/etc/kubernetes/manifests /var/lib/kubelet /etc/kubernetes/pki]\n`);
  emptyDir("/etc/kubernetes/manifests");
  emptyDir("/var/lib/kubelet");
  removePath("/etc/kubernetes/pki");
  emptyDir("/var/lib/etcd");
  const deleted: string[] = [];
  try {
    for (const f of fs.readdirSync(p("/etc/kubernetes"))) {
      if (f.endsWith(".conf")) {
        removePath(`/etc/kubernetes/${f}`);
        deleted.push(`/etc/kubernetes/${f}`);
      }
    }
  } catch {
    /* no /etc/kubernetes */
  }
  process.stdout.write(
    `[reset] Deleting files: [${deleted.join(" ")}]\n\n` +
      `The reset process does not clean CNI configuration. To do so, you must remove /etc/cni/net.d\n\n` +
      `The reset process does not reset or clean up iptables rules or IPVS tables.\n\n` +
      `The reset process does not clean your kubeconfig files and you must remove them manually.\nPlease, check the contents of the $HOME/.kube/config file.\n`,
  );
  return 0;
}
