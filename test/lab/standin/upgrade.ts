/**
 * TEST DOUBLE, not real kubeadm: `kubeadm upgrade plan|apply|node` of the lab stand-in. Behaviour per
 * minor (the installed kubeadm's minor decides) follows kubeadm's own source, read for v1.31.14,
 * v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3 and v1.37.2 (cmd/kubeadm/app/util/config/cluster.go,
 * phases/upgrade/postupgrade.go, cmd/phases/upgrade/...). Where kubeadm-facts.md says otherwise, the
 * source wins and the comment says so.
 * - version policy: one minor at a time, no downgrade, installed kubeadm must match the target;
 * - apply rewrites kubernetesVersion in kubeadm-config (every other byte kept) and the manifests;
 * - apply and node rewrite this node's config.yaml and handle instance-config.yaml, the
 *   --container-runtime-endpoint flag and the cri-socket annotation as that minor does;
 * - the ConfigMap's feature gates are decoded, never validated: apply and plan only PRINT an unknown
 *   or deprecated gate (features.CheckDeprecatedFlags); they do not fail on it (the facts file's
 *   "FATAL. Unable to upgrade a cluster using deprecated feature-gate flags" is older kubeadm).
 */
import { parse } from "yaml";
import { compareVersions, exists, installedVersion, parseCli, parseVersion, readLineSync, stepDuration, Version, failOnce, readText, writeText, clockMs } from "./common";
import { klogWarning } from "./cluster";
import { detectCriSocket, KNOWN_ENDPOINTS } from "./cri";
import { featureGatesOf, Obj, readConfigFile } from "./kubeadmconfig";
import { registeredNodeName } from "./kubelet";
import { INSTANCE_CONFIG, readFlagsAsKubeadm, readInstanceConfig, removeFlags, writeControlPlaneFiles, writeFlagsSorted, writeInstanceConfig, writeKubeletConfig } from "./nodefiles";
import { CRI_SOCKET_ANNOTATION, readStore, Store, updateStore } from "./store";
import { deprecatedGateMessages, kubeadmBool, kubeadmError, nodeLocalCriSocket, phaseError } from "./versions";

function clusterState(s: Store, minor: number): { text: string; cluster: Obj; version: Version; gates: Record<string, boolean> } {
  const cm = s.configMaps["kube-system/kubeadm-config"];
  if (!cm) throw phaseError(minor, "preflight", `unable to fetch the kubeadm-config ConfigMap: configmaps "kubeadm-config" not found`);
  const text = cm.data.ClusterConfiguration;
  const cluster = parse(text) as Obj;
  const version = parseVersion(String(cluster.kubernetesVersion ?? ""));
  if (!version) throw phaseError(minor, "preflight", `couldn't parse kubernetesVersion ${JSON.stringify(cluster.kubernetesVersion)}`);
  // Decoded only: a gate this kubeadm does not know (NodeLocalCRISocket on 1.37) is not a decode error.
  return { text, cluster, version, gates: featureGatesOf(cluster) };
}

/**
 * features.CheckDeprecatedFlags on the ConfigMap's gates: one line per unknown or deprecated gate,
 * printed with `prefix` (`[upgrade/preflight]` in apply's preflight phase from 1.32,
 * `[upgrade/config]` in 1.31's apply and in plan). Nothing fails.
 */
function printDeprecatedGates(minor: number, gates: Record<string, boolean>, prefix: string): void {
  for (const m of deprecatedGateMessages(minor, gates)) process.stdout.write(`${prefix} ${m}\n`);
}

/**
 * kubeadm's EnforceVersionPolicies (texts verified in kubeadm's policy.go, except where marked).
 * Returns mandatory and skippable (--force) errors.
 */
export function versionPolicy(target: Version, cluster: Version, kubeadm: Version): { mandatory: string[]; skippable: string[] } {
  const mandatory: string[] = [];
  const skippable: string[] = [];
  const q = JSON.stringify(target.text);
  if (target.minor > cluster.minor + 1) mandatory.push(`Specified version to upgrade to ${q} is too high; kubeadm can upgrade only 1 minor version at a time`);
  if (target.minor < cluster.minor - 1) mandatory.push(`Specified version to downgrade to ${q} is too low; kubeadm can downgrade only 1 minor version at a time`);
  else if (compareVersions(target, cluster) < 0) skippable.push(`Specified version to upgrade to ${q} is lower than the cluster version ${JSON.stringify(cluster.text)}. Downgrades are not supported`); // UNVERIFIED wording
  if (compareVersions(kubeadm, target) < 0) {
    if (target.minor > kubeadm.minor) mandatory.push(`Specified version to upgrade to ${q} is at least one minor release higher than the kubeadm minor release (${target.minor} > ${kubeadm.minor}). Such an upgrade is not supported`);
    else skippable.push(`Specified version to upgrade to ${q} is higher than the kubeadm version ${JSON.stringify(kubeadm.text)}. Upgrade kubeadm first using the tool you used to install kubeadm`);
  }
  if (kubeadm.minor > target.minor) skippable.push(`Kubeadm version ${kubeadm.text} can only be used to upgrade to Kubernetes version ${kubeadm.major}.${kubeadm.minor}`); // UNVERIFIED wording
  return { mandatory, skippable };
}

/** kubeadm's detection, falling back to containerd with a warning when it fails (several sockets). */
function detectOrDefault(node: string, warning: (node: string, err: string) => string): string {
  const d = detectCriSocket();
  if ("endpoint" in d) return d.endpoint;
  klogWarning("cluster.go:215", warning(node, d.error));
  return KNOWN_ENDPOINTS[0];
}

/**
 * GetNodeRegistration's CRI socket for this node (util/config/cluster.go), per minor:
 * - up to 1.33: gate in effect (1.32+): instance-config.yaml if it exists, else the annotation;
 *   gate off: the annotation; neither: `node X doesn't have ... annotation`;
 * - 1.34: the annotation, else instance-config.yaml, else `..., or kubelet instance config <path>`;
 * - 1.35, 1.36: the annotation, else instance-config.yaml, else a warning and kubeadm's detection
 *   (containerd if that fails): no error;
 * - 1.37: instance-config.yaml, else a warning and detection; the annotation is never read.
 * @throws Error with kubeadm's message (the caller adds its wrapping).
 */
export function findSocket(minor: number, gateOn: boolean, annotation: string | undefined, node: string): string {
  const instance = exists(INSTANCE_CONFIG) ? (readInstanceConfig() ?? "") : undefined;
  const missing = `node ${node} doesn't have ${CRI_SOCKET_ANNOTATION} annotation`;
  const fallback = (n: string, err: string) => `uto-detection of CRI socket failed for node ${JSON.stringify(n)}: ${err}; falling back to default ${JSON.stringify(KNOWN_ENDPOINTS[0])}`;
  if (minor <= 33) {
    if (gateOn && instance !== undefined) return instance;
    if (annotation === undefined) throw new Error(missing);
    return annotation;
  }
  if (minor <= 36) {
    if (annotation !== undefined) return annotation;
    if (instance !== undefined) return instance;
    if (minor === 34) throw new Error(`${missing}, or kubelet instance config ${INSTANCE_CONFIG}`);
    klogWarning("cluster.go:210", `node ${JSON.stringify(node)} lacks annotation ${JSON.stringify(CRI_SOCKET_ANNOTATION)} and kubelet config file ${JSON.stringify(INSTANCE_CONFIG)}; attempting auto-detection`);
    return detectOrDefault(node, (n, err) => `a${fallback(n, err)}`);
  }
  if (instance !== undefined) return instance;
  klogWarning("cluster.go:208", `Node ${JSON.stringify(node)} lacks a kubelet instance config file ${JSON.stringify(INSTANCE_CONFIG)}; attempting auto-detection`);
  return detectOrDefault(node, (n, err) => `A${fallback(n, err)}`);
}

/**
 * This node's name and CRI socket as `upgrade apply|node` fetch them before any phase runs
 * (FetchInitConfigurationFromCluster), with their error wrapping. kubeadm 1.31's `upgrade node` on a
 * worker fetches no node registration at all (newControlPlane = !isControlPlaneNode), so it needs no
 * annotation: the socket is then unknown (and unused).
 */
async function nodeRegistration(minor: number, gates: Record<string, boolean>, isApply: boolean): Promise<{ node: string; socket: string }> {
  const node = registeredNodeName();
  if (!node) throw kubeadmError(minor, "couldn't get the node name from /etc/kubernetes/kubelet.conf: open /etc/kubernetes/kubelet.conf: no such file or directory"); // UNVERIFIED
  if (minor <= 31 && !isApply && !exists("/etc/kubernetes/manifests/kube-apiserver.yaml")) return { node, socket: "" };
  const annotation = (await readStore()).nodes[node]?.metadata.annotations[CRI_SOCKET_ANNOTATION];
  try {
    return { node, socket: findSocket(minor, nodeLocalCriSocket(minor, gates), annotation, node) };
  } catch (e) {
    const why = `failed to get node registration: ${(e as Error).message}`;
    const applyPrefix = minor <= 31 ? "[upgrade/init config] FATAL" : "[upgrade] FATAL";
    throw kubeadmError(minor, isApply ? `${applyPrefix}: ${why}` : `unable to fetch the kubeadm-config ConfigMap: ${why}`);
  }
}

/** Sets (a socket) or removes (undefined) this node's cri-socket annotation (phases/patchnode). */
async function annotate(node: string, socket: string | undefined): Promise<void> {
  await updateStore((st) => {
    const n = st.nodes[node];
    if (!n) return;
    const before = n.metadata.annotations[CRI_SOCKET_ANNOTATION];
    if (socket === undefined) delete n.metadata.annotations[CRI_SOCKET_ANNOTATION];
    else n.metadata.annotations[CRI_SOCKET_ANNOTATION] = socket;
    if (before !== n.metadata.annotations[CRI_SOCKET_ANNOTATION]) n.metadata.resourceVersion = String(++st.revision);
  });
}

/**
 * The upload-config phase's annotation (apply only, this node): 1.32-1.35 set it to the socket found
 * when the gate is off (#128031); 1.33-1.35 remove it when the gate is on; 1.36 removes it whatever the
 * gate says; 1.31 (no such phase then: UNVERIFIED) and 1.37 (no patchnode phase) do nothing.
 */
async function uploadConfigAnnotation(minor: number, gateOn: boolean, node: string, socket: string): Promise<void> {
  if (minor <= 31 || minor >= 37) return;
  if (minor === 36) return annotate(node, undefined);
  if (!gateOn) return annotate(node, socket);
  if (minor >= 33) return annotate(node, undefined);
}

/**
 * The kubelet-config phase (WriteKubeletConfigFiles, then the annotation) and the post-upgrade phase
 * on this node, per minor:
 * - gate in effect, 1.32-1.36: instance-config.yaml is written ONLY WHEN MISSING, from the
 *   --container-runtime-endpoint flag in kubeadm-flags.env (never from the annotation): flag absent
 *   gives `containerRuntimeEndpoint: ""`; an unreadable flags file fails the phase, and so does one
 *   with no flags up to v1.35.0 (`emptyFlagsFail`). From 1.33 the flag is removed only then (the rest rewritten sorted); 1.32 keeps it (and
 *   takes the first such flag where 1.33 takes the last).
 * - 1.37: a missing instance-config.yaml is written, with a warning, from the socket found (detected,
 *   since the file was missing); an existing one is kept. (The facts file says 1.37 fails instead.)
 * - config.yaml: the cluster's kubelet config, patched with the instance config ON DISK when the gate
 *   is in effect (a stale file's endpoint included).
 * - annotation: removed when the gate is in effect, 1.33-1.36, by apply and node alike.
 * - post-upgrade: 1.35 removes --pod-infra-container-image (RemoveKubeletArgsFromFile: the rest
 *   rewritten sorted; a flags file that cannot be read fails the phase, and so does one with no flags
 *   for kubeadm v1.35.0 only: `emptyFlagsFail`); 1.36 and
 *   1.37 remove nothing: their list is empty, so 1.37 does not strip --container-runtime-endpoint
 *   (which the facts file says it does).
 */
async function upgradeLocalKubelet(kubeadm: Version, gates: Record<string, boolean>, node: string, socket: string): Promise<void> {
  const minor = kubeadm.minor;
  const gateOn = nodeLocalCriSocket(minor, gates);
  const clusterKubelet = (await readStore()).configMaps["kube-system/kubelet-config"]?.data.kubelet ?? "";
  if (gateOn && !exists(INSTANCE_CONFIG)) {
    if (minor >= 37) {
      klogWarning("postupgrade.go:126", `The kubelet instance configuration file ${INSTANCE_CONFIG} was not found. Creating a new one with defaults. Please verify its contents!`);
      writeInstanceConfig(socket);
    } else {
      let args;
      try {
        args = readFlagsAsKubeadm(kubeadm);
      } catch (e) {
        throw phaseError(minor, "kubelet-config", `error reading kubeadm flags file: ${(e as Error).message}`);
      }
      const flags = args.filter((a) => a.name === "container-runtime-endpoint");
      const endpoint = (minor === 32 ? flags[0] : flags[flags.length - 1])?.value ?? "";
      if (endpoint !== "" && minor >= 33) writeFlagsSorted(args.filter((a) => a.name !== "container-runtime-endpoint"));
      writeInstanceConfig(endpoint);
    }
  }
  writeKubeletConfig(clusterKubelet, gateOn ? (readInstanceConfig() ?? "") : undefined, minor);
  process.stdout.write(`[upgrade] Backing up kubelet config file to /etc/kubernetes/tmp/kubeadm-kubelet-config.yaml\n[kubelet-start] Writing kubelet configuration to file "/var/lib/kubelet/config.yaml"\n`);
  if (gateOn && minor >= 33 && minor <= 36) await annotate(node, undefined);
  process.stdout.write(`[upgrade/kubelet-config] The kubelet configuration for this node was successfully upgraded!\n`);
  if (minor === 35) {
    try {
      removeFlags(["pod-infra-container-image"], kubeadm);
    } catch (e) {
      throw phaseError(minor, "post-upgrade", (e as Error).message);
    }
  }
}

export async function plan(args: string[]): Promise<number> {
  void args;
  const v = installedVersion();
  if (!exists("/etc/kubernetes/admin.conf")) throw kubeadmError(v.minor, `failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: no such file or directory`); // UNVERIFIED
  const c = clusterState(await readStore(), v.minor);
  process.stdout.write(`[preflight] Running pre-flight checks.\n[upgrade/config] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n`);
  printDeprecatedGates(v.minor, c.gates, "[upgrade/config]");
  process.stdout.write(
    `[upgrade] Running cluster health checks\n[upgrade] Fetching available versions to upgrade to\n` +
      `[upgrade/versions] Cluster version: ${c.version.text}\n[upgrade/versions] kubeadm version: ${v.text}\n` +
      (compareVersions(v, c.version) > 0
        ? `\nUpgrade to the latest version in the v${v.major}.${v.minor} series:\n\nYou can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply ${v.text}\n\n`
        : `\nAwesome, you're up-to-date! Enjoy!\n`),
  );
  return 0;
}

export async function apply(args: string[]): Promise<number> {
  const v = installedVersion();
  const minor = v.minor;
  const cli = parseCli(args, ["config"], { f: "force", y: "yes" });
  const force = kubeadmBool(cli, minor, "force");
  const yes = kubeadmBool(cli, minor, "yes") || force;
  const dryRun = kubeadmBool(cli, minor, "dry-run");
  let targetText = cli.positional[0];
  if (typeof cli.flags.config === "string") {
    const cf = readConfigFile(cli.flags.config, minor);
    const a = (cf.upgrade?.apply ?? {}) as Obj;
    if (typeof a.kubernetesVersion === "string") targetText = targetText ?? a.kubernetesVersion;
  }
  if (targetText === undefined) throw kubeadmError(minor, "missing one or more required arguments. Required arguments: [version]");
  const target = parseVersion(targetText);
  if (!target) throw kubeadmError(minor, `couldn't parse version ${JSON.stringify(targetText)}`);
  if (!exists("/etc/kubernetes/admin.conf")) throw kubeadmError(minor, `failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: no such file or directory`); // UNVERIFIED
  process.stdout.write(`[upgrade] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n`);
  const c = clusterState(await readStore(), minor);
  const reg = await nodeRegistration(minor, c.gates, true);
  process.stdout.write(`[upgrade/preflight] Running preflight checks\n`);
  printDeprecatedGates(minor, c.gates, minor <= 31 ? "[upgrade/config]" : "[upgrade/preflight]");
  const pol = versionPolicy(target, c.version, v);
  if (pol.mandatory.length > 0) {
    throw phaseError(minor, "preflight", `the version argument is invalid due to these fatal errors:\n\n${[...pol.mandatory, ...pol.skippable].map((e) => `\t- ${e}\n`).join("")}\nPlease fix the misalignments highlighted above and try upgrading again`);
  }
  if (pol.skippable.length > 0 && !force) {
    throw phaseError(minor, "preflight", `the version argument is invalid due to these errors:\n\n${pol.skippable.map((e) => `\t- ${e}\n`).join("")}\nCan be bypassed if you pass the --force flag`);
  }
  process.stdout.write(`[upgrade/version] You have chosen to upgrade the cluster version to "${target.text}"\n[upgrade/versions] Cluster version: ${c.version.text}\n[upgrade/versions] kubeadm version: ${v.text}\n`);
  // Lab fault: this upgrade apply fails once, before it changes anything (UNVERIFIED wording).
  failOnce("upgrade-apply", () => phaseError(minor, "control-plane", "couldn't upgrade control plane. kubeadm has tried to recover everything into the earlier state. Errors faced: timed out waiting for the condition"));
  if (!yes) {
    process.stdout.write("[upgrade] Are you sure you want to proceed? [y/N]: ");
    const answer = readLineSync();
    if (answer.toLowerCase() !== "y") throw kubeadmError(minor, "won't proceed; the user didn't answer (Y|y) in order to continue");
  }
  if (dryRun) return 0;
  await stepDuration("upgradeApply");
  if (exists("/etc/kubernetes/manifests/kube-apiserver.yaml")) writeControlPlaneFiles(target.text);
  renewAdminCertificate(target.text);
  await updateStore((s) => {
    const cm = s.configMaps["kube-system/kubeadm-config"];
    if (!cm) return;
    const re = /^kubernetesVersion:.*$/m;
    cm.data.ClusterConfiguration = re.test(cm.data.ClusterConfiguration)
      ? cm.data.ClusterConfiguration.replace(re, `kubernetesVersion: ${target.text}`)
      : `${cm.data.ClusterConfiguration.replace(/\n?$/, "\n")}kubernetesVersion: ${target.text}\n`;
    cm.metadata.resourceVersion = String(++s.revision);
  });
  process.stdout.write(`[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the "kube-system" Namespace\n`);
  await uploadConfigAnnotation(minor, nodeLocalCriSocket(minor, c.gates), reg.node, reg.socket);
  await upgradeLocalKubelet(v, c.gates, reg.node, reg.socket);
  process.stdout.write(
    `\n[upgrade] SUCCESS! A control plane node of your cluster was upgraded to "${target.text}".\n\n` +
      `[upgrade] Now please proceed with upgrading the rest of the nodes by following the right order.\n`,
  );
  return 0;
}

/**
 * `kubeadm upgrade apply` renews the control plane's certificates by default (`--certificate-renewal`),
 * the admin kubeconfig's client certificate among them: the lab's admin.conf gets a new certificate text
 * naming the upgrade (the lab's certificates are labelled text, not X.509).
 */
function renewAdminCertificate(version: string): void {
  const text = readText("/etc/kubernetes/admin.conf");
  if (text === undefined) return;
  const cert = Buffer.from(`lab stand-in certificate for kubernetes-admin, renewed by kubeadm upgrade apply ${version} at ${clockMs()}\n`).toString("base64");
  writeText("/etc/kubernetes/admin.conf", text.replace(/client-certificate-data: \S+/, `client-certificate-data: ${cert}`), 0o600);
}

export async function node(args: string[]): Promise<number> {
  const v = installedVersion();
  const minor = v.minor;
  const cli = parseCli(args, ["config"]);
  const dryRun = kubeadmBool(cli, minor, "dry-run");
  if (!exists("/etc/kubernetes/kubelet.conf")) {
    throw kubeadmError(minor, "couldn't create a Kubernetes client from file \"/etc/kubernetes/kubelet.conf\": open /etc/kubernetes/kubelet.conf: no such file or directory"); // UNVERIFIED
  }
  process.stdout.write(`[upgrade] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n`);
  const c = clusterState(await readStore(), minor);
  const reg = await nodeRegistration(minor, c.gates, false);
  process.stdout.write(`[upgrade/preflight] Running pre-flight checks\n`);
  if (c.version.minor !== minor) {
    // UNVERIFIED: the lab requires the node's kubeadm to be the cluster's minor (install first).
    throw phaseError(minor, "preflight", `the kubeadm version ${v.text} does not match the cluster version ${c.version.text}: upgrade kubeadm on this node to v${c.version.major}.${c.version.minor} first`);
  }
  if (dryRun) return 0;
  await stepDuration("upgradeNode");
  if (exists("/etc/kubernetes/manifests/kube-apiserver.yaml")) {
    writeControlPlaneFiles(c.version.text);
    process.stdout.write(`[upgrade] Upgrading your Static Pod-hosted control plane instance to version "${c.version.text}"...\n`);
  } else {
    process.stdout.write(`[upgrade] Skipping phase. Not a control plane node.\n`);
  }
  await upgradeLocalKubelet(v, c.gates, reg.node, reg.socket);
  process.stdout.write(`[upgrade] The configuration for this node was successfully upgraded!\n[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.\n`);
  return 0;
}
