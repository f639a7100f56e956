/**
 * TEST DOUBLE, not real kubeadm: `kubeadm init` of the lab stand-in (see kubeadm.ts for the forms).
 * Validates and writes what kubeadm-facts.md says kubeadm of the installed minor does.
 */
import * as fs from "fs";
import { compareVersions, Fail, exists, installedVersion, labConfig, nodeName, p, parseCli, parseGoDuration, parseVersion, stepDuration, writeText, hostname } from "./common";
import { addToken, resolveCriSocket, joinCommand, kubeletStartPhase, newCA, newCertificateKey, newNode, nodeAddress, uploadCerts, CONTROL_PLANE_TAINT } from "./cluster";
import { criPreflightError, socketExists } from "./cri";
import { featureGatesOf, nodeRegistration, Obj, readConfigFile, renderClusterConfiguration, renderKubeletConfiguration } from "./kubeadmconfig";
import { startKubelet } from "./kubelet";
import { CONTROL_PLANE_COMPONENTS, kubeconfig, writeControlPlaneFiles } from "./nodefiles";
import { now, readStore, updateStore } from "./store";
import { assertFeatureGates, kubeadmBool, kubeadmError, nodeLocalCriSocket, phaseError, preflight } from "./versions";

const FLAG_FORMS = ["config", "cri-socket", "node-name", "kubernetes-version", "control-plane-endpoint", "pod-network-cidr", "service-cidr", "certificate-key", "ignore-preflight-errors", "apiserver-advertise-address"];

/** Control-plane preflight checks on local files (kubeadm's FileAvailable/DirAvailable checks). */
export function controlPlaneFileChecks(): { name: string; error: string }[] {
  const checks: { name: string; error: string }[] = [];
  for (const c of ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"]) {
    const f = `/etc/kubernetes/manifests/${c}.yaml`;
    if (exists(f)) checks.push({ name: `FileAvailable--etc-kubernetes-manifests-${c}.yaml`, error: `${f} already exists` });
  }
  try {
    if (fs.readdirSync(p("/var/lib/etcd")).length > 0) checks.push({ name: "DirAvailable--var-lib-etcd", error: "/var/lib/etcd is not empty" });
  } catch {
    /* absent: fine */
  }
  return checks;
}

export async function init(args: string[]): Promise<number> {
  const v = installedVersion();
  const minor = v.minor;
  const cli = parseCli(args, FLAG_FORMS);
  const uploadCertsFlag = kubeadmBool(cli, minor, "upload-certs");
  // kubeadm's own flags this stand-in cannot honour are refused, not ignored (a --dry-run would init the node).
  for (const unsupported of ["dry-run", "skip-token-print"]) {
    if (kubeadmBool(cli, minor, unsupported)) throw new Fail(`this lab stand-in's kubeadm init does not support --${unsupported}`, 1);
  }
  const mixed = Object.keys(cli.flags).filter((f) => !["config", "upload-certs", "ignore-preflight-errors", "certificate-key", "skip-token-print", "v", "dry-run"].includes(f));
  let initCfg: Obj | undefined;
  let clusterCfg: Obj | undefined;
  let kubeletCfg: Obj | undefined;
  const configFile = cli.flags.config;
  if (typeof configFile === "string") {
    if (mixed.length > 0) throw kubeadmError(minor, `can not mix '--config' with arguments [${mixed.join(" ")}]`);
    const cf = readConfigFile(configFile, minor);
    for (const w of cf.warnings) process.stderr.write(`${w}\n`);
    if (cf.join) throw kubeadmError(minor, "the config file contains a JoinConfiguration; use kubeadm join");
    initCfg = cf.init;
    clusterCfg = cf.cluster;
    kubeletCfg = cf.kubelet;
  } else {
    const f = (n: string): string | undefined => (typeof cli.flags[n] === "string" ? (cli.flags[n] as string) : undefined);
    initCfg = { nodeRegistration: { name: f("node-name"), criSocket: f("cri-socket") } };
    clusterCfg = {
      kubernetesVersion: f("kubernetes-version"),
      controlPlaneEndpoint: f("control-plane-endpoint"),
      networking: { ...(f("pod-network-cidr") ? { podSubnet: f("pod-network-cidr") } : {}), ...(f("service-cidr") ? { serviceSubnet: f("service-cidr") } : {}) },
    };
  }
  const reg = nodeRegistration(initCfg);
  const name = reg.name ?? hostname();
  const ignored = [
    ...reg.ignorePreflightErrors,
    ...(typeof cli.flags["ignore-preflight-errors"] === "string" ? (cli.flags["ignore-preflight-errors"] as string).split(",") : []),
  ];

  // Defaulting detects the CRI socket before validation checks the gates (SetInitDynamicDefaults, then
  // ValidateInitConfiguration): two sockets fail first even with a gate kubeadm does not know.
  const endpoint = resolveCriSocket(minor, reg.criSocket);
  const gates = featureGatesOf(clusterCfg);
  assertFeatureGates(minor, gates);
  let k8s = v;
  const kv = clusterCfg?.kubernetesVersion;
  if (typeof kv === "string" && kv !== "") {
    const parsed = parseVersion(kv);
    if (!parsed) throw kubeadmError(minor, `couldn't parse Kubernetes version ${JSON.stringify(kv)}`);
    // UNVERIFIED wording. Real kubeadm also accepts a control plane one minor older; the lab wants
    // the installed minor (brief), and never a newer version.
    if (parsed.minor !== minor || parsed.major !== v.major || compareVersions(parsed, v) > 0) {
      throw kubeadmError(minor, `this version of kubeadm (${v.text}) only supports deploying clusters with the control plane version ${v.major}.${minor}.x not newer than ${v.text}. Current version: ${parsed.text}`);
    }
    k8s = parsed;
  }
  const gateOn = nodeLocalCriSocket(minor, gates);

  // Preflight.
  process.stdout.write(`[init] Using Kubernetes version: ${k8s.text}\n[preflight] Running pre-flight checks\n`);
  const checks = controlPlaneFileChecks();
  if (!socketExists(endpoint)) checks.push({ name: "CRI", error: criPreflightError(endpoint) });
  preflight(minor, checks, ignored);
  const store = await readStore();
  if (store.configMaps["kube-system/kubeadm-config"] && store.initNode !== undefined && store.initNode !== name) {
    throw phaseError(minor, "preflight", `lab stand-in: the lab's one cluster store already holds a cluster initialised on node ${JSON.stringify(store.initNode)}`);
  }

  await stepDuration("init");

  // certs, kubeconfig, etcd, control-plane phases.
  const ca = newCA();
  const apiEndpoint =
    typeof clusterCfg?.controlPlaneEndpoint === "string" && clusterCfg.controlPlaneEndpoint !== ""
      ? (clusterCfg.controlPlaneEndpoint.includes(":") ? clusterCfg.controlPlaneEndpoint : `${clusterCfg.controlPlaneEndpoint}:6443`)
      : `${String((initCfg?.localAPIEndpoint as Obj | undefined)?.advertiseAddress ?? nodeAddress())}:${String((initCfg?.localAPIEndpoint as Obj | undefined)?.bindPort ?? 6443)}`;
  process.stdout.write(`[certs] Using certificateDir folder "/etc/kubernetes/pki"\n`);
  writeText("/etc/kubernetes/pki/ca.crt", ca.cert, 0o644);
  writeText("/etc/kubernetes/pki/ca.key", ca.key, 0o600);
  process.stdout.write(`[kubeconfig] Using kubeconfig folder "/etc/kubernetes"\n`);
  writeText("/etc/kubernetes/admin.conf", kubeconfig(apiEndpoint, ca.cert, "kubernetes-admin"), 0o600);
  writeText("/etc/kubernetes/super-admin.conf", kubeconfig(apiEndpoint, ca.cert, "kubernetes-super-admin"), 0o600);
  writeText("/etc/kubernetes/kubelet.conf", kubeconfig(apiEndpoint, ca.cert, `system:node:${name}`), 0o600);
  writeText("/etc/kubernetes/controller-manager.conf", kubeconfig(apiEndpoint, ca.cert, "system:kube-controller-manager"), 0o600);
  writeText("/etc/kubernetes/scheduler.conf", kubeconfig(apiEndpoint, ca.cert, "system:kube-scheduler"), 0o600);
  writeText("/var/lib/etcd/member/snap/db", "lab stand-in etcd data\n", 0o600, 0o700);
  writeControlPlaneFiles(k8s.text);
  process.stdout.write(`[control-plane] Creating static Pod manifests for ${CONTROL_PLANE_COMPONENTS.join(", ")}\n`);

  // kubelet-start phase.
  const clusterConfiguration = renderClusterConfiguration(clusterCfg, k8s.text);
  const clusterKubelet = renderKubeletConfiguration(clusterCfg, kubeletCfg);
  // UNVERIFIED wording (kubeadm waits for the kubelet's healthz, then fails this phase).
  await kubeletStartPhase({ minor, gateOn, endpoint, clusterKubelet, reg, name }, "wait-control-plane", "failed while waiting for the kubelet to start");

  // upload-config, upload-certs, mark-control-plane, bootstrap-token phases (the store).
  const cfg = labConfig();
  const certKey =
    typeof cli.flags["certificate-key"] === "string" ? (cli.flags["certificate-key"] as string) : typeof initCfg?.certificateKey === "string" ? initCfg.certificateKey : newCertificateKey();
  const taints = reg.taints ?? [CONTROL_PLANE_TAINT];
  const tokens: string[] = [];
  await updateStore((s) => {
    const keepBlocks = s.drainBlocks;
    const nodes = s.nodes;
    Object.assign(s, { configMaps: {}, tokens: [], certs: undefined, drainBlocks: keepBlocks, nodes });
    s.ca = ca;
    s.apiEndpoint = apiEndpoint;
    const ts = now();
    s.configMaps["kube-system/kubeadm-config"] = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kubeadm-config", namespace: "kube-system", resourceVersion: String(++s.revision), creationTimestamp: ts },
      data: { ClusterConfiguration: clusterConfiguration },
    };
    s.configMaps["kube-system/kubelet-config"] = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kubelet-config", namespace: "kube-system", resourceVersion: String(++s.revision), creationTimestamp: ts },
      data: { kubelet: clusterKubelet },
    };
    s.nodes[name] = newNode(s, { name, controlPlane: true, taints, criAnnotation: gateOn ? undefined : endpoint, version: v.text });
    const bts = Array.isArray(initCfg?.bootstrapTokens) ? (initCfg!.bootstrapTokens as Obj[]) : [{}];
    for (const bt of bts) {
      const ttl = typeof bt.ttl === "string" ? bt.ttl : undefined;
      const secs = ttl !== undefined ? parseTtl(ttl, minor) : cfg.tokenTtlSeconds;
      tokens.push(addToken(s, secs, typeof bt.token === "string" ? bt.token : undefined));
    }
    if (uploadCertsFlag) uploadCerts(s, certKey, cfg.certificateKeyTtlSeconds);
    s.initNode = name;
  });
  await startKubelet();

  const st = await readStore();
  const join = joinCommand(st, tokens[0]);
  const hasCpe = typeof clusterCfg?.controlPlaneEndpoint === "string" && clusterCfg.controlPlaneEndpoint !== "";
  if (uploadCertsFlag) {
    process.stdout.write(`[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace\n[upload-certs] Using certificate key:\n${certKey}\n`);
  }
  process.stdout.write(`[mark-control-plane] Marking the node ${name} as control-plane by adding the labels: [node-role.kubernetes.io/control-plane node.kubernetes.io/exclude-from-external-load-balancers]\n`);
  process.stdout.write(`[bootstrap-token] Using token: ${tokens[0]}\n`);
  process.stdout.write(
    `\nYour Kubernetes control-plane has initialized successfully!\n\n` +
      `To start using your cluster, you need to run the following as a regular user:\n\n` +
      `  mkdir -p $HOME/.kube\n  sudo cp -i /etc/kubernetes/admin.conf $HOME/.kube/config\n  sudo chown $(id -u):$(id -g) $HOME/.kube/config\n\n` +
      `Alternatively, if you are the root user, you can run:\n\n  export KUBECONFIG=/etc/kubernetes/admin.conf\n\n` +
      `You should now deploy a pod network to the cluster.\nRun "kubectl apply -f [podnetwork].yaml" with one of the options listed at:\n  https://kubernetes.io/docs/concepts/cluster-administration/addons/\n\n` +
      (hasCpe
        ? `You can now join any number of control-plane nodes running the following command on each as root:\n\n  ${join.replace(" --discovery", " \\\n\t--discovery")}\\\n\t--control-plane${uploadCertsFlag ? ` --certificate-key ${certKey}` : ""}\n\n` +
          (uploadCertsFlag
            ? `Please note that the certificate-key gives access to cluster sensitive data, keep it secret!\nAs a safeguard, uploaded-certs will be deleted in two hours; If necessary, you can use\n"kubeadm init phase upload-certs --upload-certs" to reload certs afterward.\n\n`
            : "")
        : "") +
      `Then you can join any number of worker nodes by running the following on each as root:\n\n` +
      `${join.replace(" --discovery", " \\\n\t--discovery")}\n`,
  );
  return 0;
}

/** Bootstrap token ttl (Go duration; 0 = never). */
export function parseTtl(ttl: string, minor: number): number {
  const secs = parseGoDuration(ttl);
  if (secs === undefined) throw kubeadmError(minor, `invalid ttl ${JSON.stringify(ttl)}`);
  return secs;
}
