/**
 * TEST DOUBLE, not real kubeadm: `kubeadm token create [--ttl D] [--print-join-command] [token]`,
 * `kubeadm init phase upload-certs --upload-certs [--certificate-key K]` and
 * `kubeadm certs certificate-key`. Both need /etc/kubernetes/admin.conf on the node, as kubeadm does.
 * Lifetimes: --ttl, else $LAB_DIR/config.json tokenTtlSeconds; certificate keys certificateKeyTtlSeconds.
 */
import { exists, installedVersion, labConfig, parseCli, parseGoDuration } from "./common";
import { addToken, joinCommand, newCertificateKey, TOKEN_RE, uploadCerts } from "./cluster";
import { readStore, updateStore } from "./store";
import { kubeadmBool, kubeadmError, phaseError } from "./versions";

function needAdmin(minor: number): void {
  // UNVERIFIED wording.
  if (!exists("/etc/kubernetes/admin.conf")) throw kubeadmError(minor, "failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: no such file or directory");
}

export async function tokenCreate(args: string[]): Promise<number> {
  const minor = installedVersion().minor;
  const cli = parseCli(args, ["ttl", "description", "usages", "groups"]);
  const printJoinCommand = kubeadmBool(cli, minor, "print-join-command");
  needAdmin(minor);
  const ttlText = typeof cli.flags.ttl === "string" ? cli.flags.ttl : undefined;
  const ttl = ttlText !== undefined ? parseGoDuration(ttlText) : labConfig().tokenTtlSeconds;
  if (ttl === undefined) throw kubeadmError(minor, `invalid argument ${JSON.stringify(ttlText)} for "--ttl" flag: time: invalid duration ${JSON.stringify(ttlText)}`);
  const given = cli.positional[0];
  if (given !== undefined && !TOKEN_RE.test(given)) throw kubeadmError(minor, `the bootstrap token ${JSON.stringify(given)} was not of the form "\\\\A([a-z0-9]{6})\\\\.([a-z0-9]{16})\\\\z"`);
  const s0 = await readStore();
  if (!s0.ca) throw kubeadmError(minor, "failed to get cluster info: no cluster in the lab store"); // UNVERIFIED
  const token = await updateStore((s) => addToken(s, ttl, given));
  process.stdout.write(printJoinCommand ? `${joinCommand(await readStore(), token)}\n` : `${token}\n`);
  return 0;
}

export async function uploadCertsPhase(args: string[]): Promise<number> {
  const minor = installedVersion().minor;
  const cli = parseCli(args, ["certificate-key", "config"]);
  const upload = kubeadmBool(cli, minor, "upload-certs");
  needAdmin(minor);
  if (!upload) {
    process.stdout.write("[upload-certs] Skipping phase. Please see --upload-certs\n");
    return 0;
  }
  if (!exists("/etc/kubernetes/pki/ca.key")) throw phaseError(minor, "upload-certs", "error uploading certs: failed to load the CA: open /etc/kubernetes/pki/ca.key: no such file or directory"); // UNVERIFIED
  const key = typeof cli.flags["certificate-key"] === "string" ? cli.flags["certificate-key"] : newCertificateKey();
  await updateStore((s) => uploadCerts(s, key, labConfig().certificateKeyTtlSeconds));
  process.stdout.write(`[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace\n[upload-certs] Using certificate key:\n${key}\n`);
  return 0;
}

export async function certificateKey(): Promise<number> {
  process.stdout.write(`${newCertificateKey()}\n`);
  return 0;
}
