/**
 * The upload-config half of the fidelity test: the kubeadm-config ConfigMap that
 * `kubeadm init phase upload-config kubeadm --config <file>` stores, real kubeadm (against the real API
 * of kubeapiserver.ts) against the stand-in (which has no such phase: its whole `init` stores the
 * ConfigMap in its cluster store). Compared: the outcome and the ConfigMap's data, key by key.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { STANDIN_COMMANDS, renderWrapper } from "../lab/nodes/wrappers";
import type { Store } from "../lab/standin/store";
import { CONFIG_FILE, CaseKey, FidelityInput, GATES, HOSTNAME, INPUTS, initArgs, minorOf, renderConfig, socketPaths } from "./cases";
import { Artifacts, readArtifacts } from "./compare";
import { ADMIN_TOKEN, RealApi, realKubeconfig } from "./kubeapiserver";
import { hostPath, prepareRoot, runInNamespace } from "./namespace";
import { FAKE_SYSTEMCTL, SideResult, keepOutput, linkBinary } from "./nodes";

/** The pseudo-artifact holding the kubeadm-config ConfigMap's data after the run. */
export const KUBEADM_CONFIG = "kubeadm-config";

/** Where the admin kubeconfig lies inside the node. */
// Not admin.conf: at that path kubeadm (1.29+) first bootstraps the admin user (a ClusterRoleBinding
// through super-admin.conf), which is not what is compared.
const ADMIN_CONF = "/etc/kubernetes/fidelity-admin.conf";

/** The inputs: the kubelet-start inputs whose config differs in what ClusterConfiguration holds. */
export const UPLOAD_INPUTS: readonly FidelityInput[] = INPUTS.filter((i) => i.id === "detected");

/** One `init phase upload-config kubeadm` run. */
export interface UploadCase extends CaseKey {
  input: FidelityInput;
  phase: "upload-config";
}

/** Every upload-config case: versions x gates x inputs, in table order. */
export function uploadCases(versions: readonly string[]): UploadCase[] {
  return versions.flatMap((version) => GATES.flatMap((gate) => UPLOAD_INPUTS.map((input) => ({ version, minor: minorOf(version), gate, input, phase: "upload-config" as const }))));
}

/** The config file of a case (the kubelet-start rendering: InitConfiguration + ClusterConfiguration). */
function configOf(c: UploadCase): string {
  return renderConfig({ ...c, phase: "kubelet-start" });
}

/** The ConfigMap's data as one text: each key, sorted, then its value. */
export function dataText(cm: { data?: Record<string, string> } | undefined): string | undefined {
  if (!cm) return undefined;
  const data = cm.data ?? {};
  return Object.keys(data)
    .sort()
    .map((k) => `# data.${k}\n${data[k]}`)
    .join("");
}

/** `kubeadm init phase upload-config kubeadm` arguments. */
export const UPLOAD_ARGS = ["init", "phase", "upload-config", "kubeadm", "--config", CONFIG_FILE, "--kubeconfig", ADMIN_CONF];

/** Real kubeadm's upload-config for a case on a fresh node, against the real API (its turn alone; the ConfigMap deleted first). */
export async function runRealUpload(dir: string, binary: string, c: UploadCase, api: RealApi): Promise<SideResult & { apiRequests: string[] }> {
  const root = path.join(dir, "root");
  prepareRoot(root);
  linkBinary(binary, hostPath(root, "/usr/local/sbin/kubeadm"));
  fs.writeFileSync(hostPath(root, "/usr/local/sbin/systemctl"), FAKE_SYSTEMCTL, { mode: 0o755 });
  fs.writeFileSync(hostPath(root, CONFIG_FILE), configOf(c));
  fs.writeFileSync(hostPath(root, ADMIN_CONF), realKubeconfig(api.url, "kubernetes-admin", ADMIN_TOKEN), { mode: 0o600 });
  return api.exclusive(async () => {
    const del = await api.request("DELETE", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config");
    if (del.code !== 200 && del.code !== 404) throw new Error(`DELETE kubeadm-config: ${del.code} ${JSON.stringify(del.body)}`);
    const mark = api.auditMark();
    const args = UPLOAD_ARGS;
    const r = await runInNamespace({ root, hostname: HOSTNAME, sockets: socketPaths(c.input), command: ["kubeadm", ...args] });
    keepOutput(dir, args, r);
    const apiRequests = api.requestsSince(mark, "kubernetes-admin");
    fs.writeFileSync(path.join(dir, "api-requests"), apiRequests.join("\n") + "\n");
    const cm = await api.request("GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config");
    const artifacts: Artifacts = { ...readArtifacts(root, [], r.code, r.stderr), [KUBEADM_CONFIG]: { text: cm.code === 200 ? dataText(cm.body as { data?: Record<string, string> }) : undefined } };
    return { args, ...r, artifacts, apiRequests };
  });
}

/** The stand-in's upload-config for a case: the phase, or while it answers that it has none, a whole `init`. */
export async function runStandinUpload(dir: string, c: UploadCase): Promise<SideResult> {
  const root = path.join(dir, "root");
  const labDir = path.join(dir, "lab");
  prepareRoot(root);
  fs.mkdirSync(labDir, { recursive: true });
  for (const cmd of STANDIN_COMMANDS) fs.writeFileSync(hostPath(root, `/usr/local/sbin/${cmd}`), renderWrapper(cmd, labDir, HOSTNAME), { mode: 0o755 });
  fs.writeFileSync(hostPath(root, "/etc/lab-node/kubeadm-version"), `${c.version}\n`);
  fs.writeFileSync(hostPath(root, CONFIG_FILE), configOf(c));
  const run = (args: string[]) => runInNamespace({ root, hostname: HOSTNAME, sockets: socketPaths(c.input), command: ["kubeadm", ...args] });
  let args = UPLOAD_ARGS;
  let r = await run(args);
  if (r.code !== 0 && /kubeadm init phase upload-config is not supported/.test(r.stderr)) {
    args = initArgs({ ...c, phase: "kubelet-start" });
    r = await run(args);
  }
  keepOutput(dir, args, r);
  const storeFile = path.join(labDir, "cluster", "store.json");
  const store = fs.existsSync(storeFile) ? (JSON.parse(fs.readFileSync(storeFile, "utf8")) as Store) : undefined;
  const cm = store?.configMaps["kube-system/kubeadm-config"] as { data?: Record<string, string> } | undefined;
  return { args, ...r, artifacts: { ...readArtifacts(root, [], r.code, r.stderr), [KUBEADM_CONFIG]: { text: dataText(cm) } } };
}
