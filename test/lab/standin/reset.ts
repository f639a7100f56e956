/**
 * TEST DOUBLE, not real kubeadm: `kubeadm reset -f [--cri-socket x]` wipes what kubeadm wipes:
 * /etc/kubernetes/manifests, /etc/kubernetes/pki, /etc/kubernetes/*.conf, the contents of
 * /var/lib/kubelet (instance-config.yaml, config.yaml, kubeadm-flags.env with it) and of /var/lib/etcd,
 * and stops the kubelet. Like real kubeadm it does NOT delete the Node object from the API (the
 * store): `kubectl delete node <name>` does that.
 */
import * as fs from "fs";
import { emptyDir, installedVersion, p, parseCli, readLineSync, removePath, stepDuration } from "./common";
import { stopKubelet } from "./kubelet";
import { kubeadmError } from "./versions";

export async function reset(args: string[]): Promise<number> {
  const minor = installedVersion().minor;
  const cli = parseCli(args, ["cri-socket", "ignore-preflight-errors", "cert-dir", "kubeconfig"]);
  if (cli.flags.f !== true && cli.flags.force !== true) {
    process.stdout.write(`[reset] WARNING: Changes made to this host by 'kubeadm init' or 'kubeadm join' will be reverted.\n[reset] Are you sure you want to proceed? [y/N]: `);
    if (readLineSync().toLowerCase() !== "y") throw kubeadmError(minor, "aborted reset operation");
  }
  await stepDuration("other");
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
