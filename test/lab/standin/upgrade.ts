/**
 * TEST DOUBLE, not real kubeadm: `kubeadm upgrade plan|apply|node` of the lab stand-in, following
 * kubeadm-facts.md per minor (the installed kubeadm's minor decides the behaviour):
 * - version policy: one minor at a time, no downgrade, installed kubeadm must match the target;
 * - apply rewrites kubernetesVersion in kubeadm-config (every other byte kept) and the manifests;
 * - apply and node rewrite this node's config.yaml and handle instance-config.yaml, the
 *   --container-runtime-endpoint flag and the cri-socket annotation as that minor does;
 * - only apply checks the ConfigMap's feature gates (features.CheckDeprecatedFlags in its preflight
 *   phase); the stored ClusterConfiguration is decoded, never validated.
 */
import { parse } from "yaml";
import { compareVersions, exists, Fail, installedVersion, parseCli, parseVersion, readLineSync, stepDuration, Version } from "./common";
import { featureGatesOf, Obj, readConfigFile } from "./kubeadmconfig";
import { registeredNodeName } from "./kubelet";
import { INSTANCE_CONFIG, readFlagsAsKubeadm, readInstanceConfig, removeFlags, writeControlPlaneFiles, writeFlagsSorted, writeInstanceConfig, writeKubeletConfig } from "./nodefiles";
import { CRI_SOCKET_ANNOTATION, readStore, Store, updateStore } from "./store";
import { deprecatedGateMessages, kubeadmError, nodeLocalCriSocket, phaseError } from "./versions";

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
 * `upgrade apply`'s check of the ConfigMap's gates (features.CheckDeprecatedFlags, verified in the
 * 1.3x source; 1.37 UNVERIFIED): each unknown or deprecated gate printed as
 * `[upgrade/config] <message>`, then the preflight phase fails.
 */
function checkDeprecatedGates(minor: number, gates: Record<string, boolean>, fail: (message: string) => Fail): void {
  const messages = deprecatedGateMessages(minor, gates);
  if (messages.length === 0) return;
  for (const m of messages) process.stdout.write(`[upgrade/config] ${m}\n`);
  throw fail("[upgrade/config] FATAL. Unable to upgrade a cluster using deprecated feature-gate flags. Please see the release notes");
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

/** How this minor's upgrade finds the local node's CRI socket (kubeadm-facts.md, "Cluster side"). */
export function findSocket(minor: number, gateOn: boolean, annotation: string | undefined, node: string): string {
  const instance = readInstanceConfig();
  const missing = `node ${node} doesn't have ${CRI_SOCKET_ANNOTATION} annotation`;
  let order: (string | undefined)[];
  if (minor <= 31) order = [annotation];
  else if (minor <= 33) order = gateOn ? [instance, annotation] : [annotation];
  else if (minor <= 35) order = [annotation, instance];
  else if (minor === 36) order = [instance, annotation]; // UNVERIFIED order for 1.36
  else order = [instance];
  const found = order.find((x) => x !== undefined && x !== "");
  if (found === undefined) throw new Fail(missing);
  return found;
}

/**
 * The kubelet-config phase (WriteKubeletConfigFiles, checked in kubeadm's source), the annotation
 * handling of `upgrade apply` / `upgrade node`, and the post-upgrade phase, on this node, per minor:
 * - gate in effect, 1.32-1.36: instance-config.yaml is written ONLY WHEN MISSING, from the
 *   --container-runtime-endpoint flag in kubeadm-flags.env (never from the annotation); flag absent
 *   gives `containerRuntimeEndpoint: ""`; an unreadable flags file, or one with no flags, fails the
 *   phase. From 1.33 the flag is removed only then (the rest rewritten sorted); 1.32 keeps it.
 *   (That 1.32 also checks for an existing file is UNVERIFIED; the facts say it "creates" it.)
 * - config.yaml: the cluster's kubelet config, patched with the instance config ON DISK when the gate
 *   is in effect (a stale file's endpoint included).
 * - annotation: removed by apply and node when the gate is in effect, 1.33-1.36 (always on 1.36);
 *   set by `upgrade apply` only (upload-config phase, #128031) when the gate is off; 1.37 neither
 *   reads nor touches it.
 * - post-upgrade: --pod-infra-container-image removed on 1.35 and 1.36; --container-runtime-endpoint
 *   removed unconditionally on 1.37.
 */
async function upgradeLocalKubelet(minor: number, gates: Record<string, boolean>, dryRun: boolean, isApply: boolean): Promise<void> {
  const node = registeredNodeName();
  if (!node) throw phaseError(minor, "preflight", "couldn't get the node name from /etc/kubernetes/kubelet.conf: open /etc/kubernetes/kubelet.conf: no such file or directory"); // UNVERIFIED
  const gateOn = nodeLocalCriSocket(minor, gates);
  const s = await readStore();
  const annotation = minor >= 37 ? undefined : s.nodes[node]?.metadata.annotations[CRI_SOCKET_ANNOTATION];
  if (minor >= 37 && !exists(INSTANCE_CONFIG)) {
    // UNVERIFIED wording: 1.37 requires the instance config (#138645).
    throw phaseError(minor, "kubelet-config", `could not read the instance kubelet configuration file "${INSTANCE_CONFIG}": open ${INSTANCE_CONFIG}: no such file or directory`);
  }
  let socket: string;
  try {
    socket = findSocket(minor, gateOn, annotation, node);
  } catch (e) {
    throw phaseError(minor, "preflight", (e as Error).message);
  }
  if (dryRun) return;
  const clusterKubelet = s.configMaps["kube-system/kubelet-config"]?.data.kubelet ?? "";
  const setAnnotation = !gateOn && isApply ? socket : undefined;
  if (gateOn && minor <= 36 && !exists(INSTANCE_CONFIG)) {
    let args;
    try {
      args = readFlagsAsKubeadm();
    } catch (e) {
      throw phaseError(minor, "kubelet-config", `error reading kubeadm flags file: ${(e as Error).message}`);
    }
    let endpoint = "";
    for (const a of args) if (a.name === "container-runtime-endpoint") endpoint = a.value;
    if (endpoint !== "" && minor >= 33) writeFlagsSorted(args.filter((a) => a.name !== "container-runtime-endpoint"));
    writeInstanceConfig(endpoint);
  }
  writeKubeletConfig(clusterKubelet, gateOn ? (readInstanceConfig() ?? "") : undefined);
  process.stdout.write(`[upgrade] Backing up kubelet config file to /etc/kubernetes/tmp/kubeadm-kubelet-config.yaml\n[kubelet-start] Writing kubelet configuration to file "/var/lib/kubelet/config.yaml"\n`);
  const dropAnnotation = gateOn && minor >= 33 && minor <= 36;
  if (dropAnnotation || setAnnotation !== undefined) {
    await updateStore((st) => {
      const n = st.nodes[node];
      if (!n) return;
      const before = n.metadata.annotations[CRI_SOCKET_ANNOTATION];
      if (dropAnnotation) delete n.metadata.annotations[CRI_SOCKET_ANNOTATION];
      else if (setAnnotation !== undefined) n.metadata.annotations[CRI_SOCKET_ANNOTATION] = setAnnotation;
      if (before !== n.metadata.annotations[CRI_SOCKET_ANNOTATION]) n.metadata.resourceVersion = String(++st.revision);
    });
  }
  if (minor === 35 || minor === 36) removeFlags(["pod-infra-container-image"]);
  if (minor >= 37) removeFlags(["container-runtime-endpoint"]);
}

export async function plan(args: string[]): Promise<number> {
  void args;
  const v = installedVersion();
  if (!exists("/etc/kubernetes/admin.conf")) throw kubeadmError(v.minor, `failed to load admin kubeconfig: open /etc/kubernetes/admin.conf: no such file or directory`); // UNVERIFIED
  const c = clusterState(await readStore(), v.minor);
  checkDeprecatedGates(v.minor, c.gates, (m) => kubeadmError(v.minor, m)); // UNVERIFIED that plan checks too
  process.stdout.write(
    `[preflight] Running pre-flight checks.\n[upgrade/config] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n` +
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
  const cli = parseCli(args, ["config"]);
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
  const force = cli.flags.force === true || cli.flags.f === true;
  const yes = force || cli.flags.yes === true || cli.flags.y === true;
  const dryRun = cli.flags["dry-run"] === true;
  process.stdout.write(`[upgrade] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n[preflight] Running pre-flight checks.\n`);
  const c = clusterState(await readStore(), minor);
  checkDeprecatedGates(minor, c.gates, (m) => phaseError(minor, "preflight", m));
  const pol = versionPolicy(target, c.version, v);
  if (pol.mandatory.length > 0) {
    throw phaseError(minor, "preflight", `the version argument is invalid due to these fatal errors:\n\n${[...pol.mandatory, ...pol.skippable].map((e) => `\t- ${e}\n`).join("")}\nPlease fix the misalignments highlighted above and try upgrading again`);
  }
  if (pol.skippable.length > 0 && !force) {
    throw phaseError(minor, "preflight", `the version argument is invalid due to these errors:\n\n${pol.skippable.map((e) => `\t- ${e}\n`).join("")}\nCan be bypassed if you pass the --force flag`);
  }
  process.stdout.write(`[upgrade/version] You have chosen to upgrade the cluster version to "${target.text}"\n[upgrade/versions] Cluster version: ${c.version.text}\n[upgrade/versions] kubeadm version: ${v.text}\n`);
  if (!yes) {
    process.stdout.write("[upgrade] Are you sure you want to proceed? [y/N]: ");
    const answer = readLineSync();
    if (answer.toLowerCase() !== "y") throw kubeadmError(minor, "won't proceed; the user didn't answer (Y|y) in order to continue");
  }
  await upgradeLocalKubelet(minor, c.gates, true, true); // checks before any change (socket, instance config)
  if (dryRun) return 0;
  await stepDuration("upgradeApply");
  if (exists("/etc/kubernetes/manifests/kube-apiserver.yaml")) writeControlPlaneFiles(target.text);
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
  await upgradeLocalKubelet(minor, c.gates, false, true);
  process.stdout.write(
    `\n[upgrade] SUCCESS! A control plane node of your cluster was upgraded to "${target.text}".\n\n` +
      `[upgrade] Now please proceed with upgrading the rest of the nodes by following the right order.\n`,
  );
  return 0;
}

export async function node(args: string[]): Promise<number> {
  const v = installedVersion();
  const minor = v.minor;
  const cli = parseCli(args, ["config"]);
  const dryRun = cli.flags["dry-run"] === true;
  if (!exists("/etc/kubernetes/kubelet.conf")) {
    throw phaseError(minor, "preflight", "couldn't create a Kubernetes client from file \"/etc/kubernetes/kubelet.conf\": open /etc/kubernetes/kubelet.conf: no such file or directory"); // UNVERIFIED
  }
  process.stdout.write(`[upgrade] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...\n[preflight] Running pre-flight checks\n`);
  const c = clusterState(await readStore(), minor);
  if (c.version.minor !== minor) {
    // UNVERIFIED: the lab requires the node's kubeadm to be the cluster's minor (install first).
    throw phaseError(minor, "preflight", `the kubeadm version ${v.text} does not match the cluster version ${c.version.text}: upgrade kubeadm on this node to v${c.version.major}.${c.version.minor} first`);
  }
  await upgradeLocalKubelet(minor, c.gates, true, false);
  if (dryRun) return 0;
  await stepDuration("upgradeNode");
  if (exists("/etc/kubernetes/manifests/kube-apiserver.yaml")) {
    writeControlPlaneFiles(c.version.text);
    process.stdout.write(`[upgrade] Upgrading your Static Pod-hosted control plane instance to version "${c.version.text}"...\n`);
  } else {
    process.stdout.write(`[upgrade] Skipping phase. Not a control plane node.\n`);
  }
  await upgradeLocalKubelet(minor, c.gates, false, false);
  process.stdout.write(`[upgrade] The configuration for this node was successfully upgraded!\n[upgrade] Now you should go ahead and upgrade the kubelet package using your package manager.\n`);
  return 0;
}
