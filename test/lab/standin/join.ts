/**
 * TEST DOUBLE, not real kubeadm: `kubeadm join` of the lab stand-in (see kubeadm.ts for the forms).
 * Discovery checks the token (exists, unexpired) and the CA hash against the store; control-plane
 * joins need a controlPlaneEndpoint and an unexpired certificate key.
 */
import { parse } from "yaml";
import { clockMs, compareVersions, exists, failOnce, installedVersion, nodeName, parseCli, parseVersion, stepDuration, writeText, hostname } from "./common";
import { CONTROL_PLANE_TAINT, resolveCriSocket, kubeletStartPhase, newNode, TOKEN_RE } from "./cluster";
import { criPreflightError, socketExists } from "./cri";
import { controlPlaneFileChecks } from "./init";
import { featureGatesOf, nodeRegistration, Obj, readConfigFile } from "./kubeadmconfig";
import { startKubelet } from "./kubelet";
import { kubeconfig, writeControlPlaneFiles } from "./nodefiles";
import { readStore, updateStore } from "./store";
import { kubeadmBool, kubeadmError, nodeLocalCriSocket, phaseError, preflight } from "./versions";

const VALUE_FLAGS = ["config", "token", "discovery-token", "discovery-token-ca-cert-hash", "certificate-key", "cri-socket", "node-name", "ignore-preflight-errors", "apiserver-advertise-address"];

export async function join(args: string[]): Promise<number> {
  const v = installedVersion();
  const minor = v.minor;
  const cli = parseCli(args, VALUE_FLAGS);
  const f = (n: string): string | undefined => (typeof cli.flags[n] === "string" ? (cli.flags[n] as string) : undefined);
  const unsafeSkipCAVerification = kubeadmBool(cli, minor, "discovery-token-unsafe-skip-ca-verification");
  const controlPlaneFlag = kubeadmBool(cli, minor, "control-plane");
  let joinCfg: Obj;
  if (f("config") !== undefined) {
    const mixed = Object.keys(cli.flags).filter((k) => !["config", "ignore-preflight-errors", "v"].includes(k));
    if (mixed.length > 0 || cli.positional.length > 0) throw kubeadmError(minor, `can not mix '--config' with arguments [${[...mixed, ...cli.positional].join(" ")}]`);
    const cf = readConfigFile(f("config")!, minor);
    for (const w of cf.warnings) process.stderr.write(`${w}\n`);
    if (!cf.join) throw kubeadmError(minor, `no JoinConfiguration found in ${f("config")}`);
    joinCfg = cf.join;
  } else {
    const hash = f("discovery-token-ca-cert-hash");
    joinCfg = {
      nodeRegistration: { name: f("node-name"), criSocket: f("cri-socket") },
      discovery: {
        bootstrapToken: {
          apiServerEndpoint: cli.positional[0],
          token: f("discovery-token") ?? f("token"),
          caCertHashes: hash ? [hash] : [],
          unsafeSkipCAVerification,
        },
        tlsBootstrapToken: f("token"),
      },
      ...(controlPlaneFlag ? { controlPlane: { certificateKey: f("certificate-key") } } : {}),
    };
  }
  const reg = nodeRegistration(joinCfg);
  const name = reg.name ?? hostname();
  const controlPlane = typeof joinCfg.controlPlane === "object" && joinCfg.controlPlane !== null;
  const bt = ((joinCfg.discovery as Obj | undefined)?.bootstrapToken ?? {}) as Obj;
  const token = String(bt.token ?? "");
  const hashes = Array.isArray(bt.caCertHashes) ? bt.caCertHashes.map(String) : [];
  const ignored = [...reg.ignorePreflightErrors, ...(f("ignore-preflight-errors")?.split(",") ?? [])];

  // Config validation (kubeadm's ValidateJoinConfiguration). UNVERIFIED wording.
  if (!TOKEN_RE.test(token)) {
    throw kubeadmError(minor, `discovery.bootstrapToken.token: Invalid value: ${JSON.stringify(token)}: the bootstrap token ${JSON.stringify(token)} was not of the form "\\\\A([a-z0-9]{6})\\\\.([a-z0-9]{16})\\\\z"`);
  }
  if (hashes.length === 0 && bt.unsafeSkipCAVerification !== true) {
    throw kubeadmError(
      minor,
      `discovery.bootstrapToken.caCertHashes: Invalid value: []string(nil): using token-based discovery without caCertHashes can be unsafe. ` +
        `Set unsafeSkipCAVerification as true in your kubeadm config file or pass --discovery-token-unsafe-skip-ca-verification flag to continue`,
    );
  }
  const endpoint = resolveCriSocket(minor, reg.criSocket);

  // Preflight: local files, the runtime, then discovery.
  process.stdout.write(`[preflight] Running pre-flight checks\n`);
  const checks: { name: string; error: string }[] = [];
  if (exists("/etc/kubernetes/kubelet.conf")) checks.push({ name: "FileAvailable--etc-kubernetes-kubelet.conf", error: "/etc/kubernetes/kubelet.conf already exists" });
  if (exists("/etc/kubernetes/pki/ca.crt")) checks.push({ name: "FileAvailable--etc-kubernetes-pki-ca.crt", error: "/etc/kubernetes/pki/ca.crt already exists" });
  if (controlPlane) checks.push(...controlPlaneFileChecks());
  if (!socketExists(endpoint)) checks.push({ name: "CRI", error: criPreflightError(endpoint) });
  preflight(minor, checks, ignored);

  const s = await readStore();
  const apiServer = String(bt.apiServerEndpoint ?? s.apiEndpoint ?? "");
  const cm = s.configMaps["kube-system/kubeadm-config"];
  if (!cm || !s.ca) {
    // UNVERIFIED wording: nothing answers at the endpoint.
    throw phaseError(minor, "preflight", `couldn't validate the identity of the API Server: Get "https://${apiServer}/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s": dial tcp ${apiServer}: connect: connection refused`);
  }
  const [id, secret] = token.split(".");
  const t = s.tokens.find((x) => x.id === id && (x.expires === null || x.expires > clockMs()));
  if (!t) throw phaseError(minor, "preflight", `couldn't validate the identity of the API Server: could not find a JWS signature in the cluster-info ConfigMap for token ID ${JSON.stringify(id)}`);
  if (t.secret !== secret) throw phaseError(minor, "preflight", "couldn't validate the identity of the API Server: failed to verify JWS signature of received cluster info object, can't trust this API Server");
  if (hashes.length > 0 && !hashes.includes(s.ca.hash)) {
    throw phaseError(minor, "preflight", `couldn't validate the identity of the API Server: cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "${s.ca.hash}" are pinned`);
  }
  process.stdout.write(
    `[preflight] Reading configuration from the cluster...\n[preflight] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n`,
  );
  const cluster = parse(cm.data.ClusterConfiguration) as Obj;
  // The ClusterConfiguration read from the cluster is decoded, not validated (as upgrade does, facts
  // file): a gate this kubeadm does not know is not refused here. UNVERIFIED for join.
  const gates = featureGatesOf(cluster);
  const clusterVersion = parseVersion(String(cluster.kubernetesVersion ?? ""));
  if (clusterVersion && (v.minor > clusterVersion.minor || (v.minor === clusterVersion.minor && compareVersions(v, clusterVersion) > 0))) {
    // UNVERIFIED wording (kubeadm's KubeletVersion preflight check).
    preflight(minor, [{ name: "KubeletVersion", error: `the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: "${v.text.slice(1)}" Control plane version: "${clusterVersion.text.slice(1)}"` }], ignored);
  }
  const existing = s.nodes[name];
  if (existing && existing.status.conditions.some((c) => c.type === "Ready" && c.status === "True")) {
    // UNVERIFIED wording.
    throw phaseError(minor, "kubelet-start", `a Node with name ${JSON.stringify(name)} and status "Ready" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node`);
  }
  if (controlPlane) {
    if (typeof cluster.controlPlaneEndpoint !== "string" || cluster.controlPlaneEndpoint === "") {
      throw phaseError(
        minor,
        "preflight",
        "\nOne or more conditions for hosting a new control plane instance is not satisfied.\n\n" +
          "unable to add a new control plane instance to a cluster that doesn't have a stable controlPlaneEndpoint address\n\n" +
          "Please ensure that:\n* The cluster has a stable controlPlaneEndpoint address.\n* The certificates that must be shared among control plane instances are provided.\n",
      );
    }
    const key = String((joinCfg.controlPlane as Obj).certificateKey ?? "");
    if (!s.certs || s.certs.expires <= clockMs()) {
      throw phaseError(
        minor,
        "control-plane-prepare/download-certs",
        `error downloading certs: error downloading the secret: Secret "kubeadm-certs" was not found in the "kube-system" Namespace. This Secret might have expired. Please, run \`kubeadm init phase upload-certs --upload-certs\` on a control plane to generate a new one`,
      );
    }
    if (key !== s.certs.key) {
      // UNVERIFIED wording (AES-GCM open fails with a wrong key).
      throw phaseError(minor, "control-plane-prepare/download-certs", "error downloading certs: error decoding secret data with provided key: cipher: message authentication failed");
    }
  }

  await stepDuration("join");

  const gateOn = nodeLocalCriSocket(minor, gates);
  writeText("/etc/kubernetes/pki/ca.crt", s.ca.cert, 0o644);
  const server = s.apiEndpoint ?? apiServer;
  if (controlPlane) {
    writeText("/etc/kubernetes/pki/ca.key", s.ca.key, 0o600);
    writeText("/etc/kubernetes/admin.conf", kubeconfig(server, s.ca.cert, "kubernetes-admin"), 0o600);
    writeText("/etc/kubernetes/controller-manager.conf", kubeconfig(server, s.ca.cert, "system:kube-controller-manager"), 0o600);
    writeText("/etc/kubernetes/scheduler.conf", kubeconfig(server, s.ca.cert, "system:kube-scheduler"), 0o600);
    writeText("/var/lib/etcd/member/snap/db", "lab stand-in etcd data\n", 0o600, 0o700);
    writeControlPlaneFiles(clusterVersion?.text ?? v.text);
  }
  writeText("/etc/kubernetes/kubelet.conf", kubeconfig(server, s.ca.cert, `system:node:${name}`), 0o600);
  const taints = controlPlane ? (reg.taints ?? [CONTROL_PLANE_TAINT]) : (reg.taints ?? []);
  const clusterKubelet = s.configMaps["kube-system/kubelet-config"]?.data.kubelet ?? "";
  // UNVERIFIED wording.
  await kubeletStartPhase({ minor, gateOn, endpoint, clusterKubelet, reg, name, registerTaints: controlPlane ? undefined : taints }, "kubelet-start", "error waiting for the kubelet to boot up");
  // Lab fault: the join stops after its kubelet-start phase wrote kubelet.conf and the kubelet files, as
  // a kubelet that never finishes its TLS bootstrap leaves it (UNVERIFIED wording).
  failOnce("join-after-kubelet-start", () => phaseError(minor, "kubelet-start", "error waiting for the kubelet to boot up: timed out waiting for the condition"));
  await updateStore((st) => {
    st.nodes[name] = newNode(st, { name, controlPlane, taints, criAnnotation: gateOn ? undefined : endpoint, version: v.text });
  });
  await startKubelet();
  process.stdout.write(
    controlPlane
      ? `\nThis node has joined the cluster and a new control plane instance was created:\n\n* Certificate signing request was sent to apiserver and approval was received.\n* The Kubelet was informed of the new secure connection details.\n* Control plane label and taint were applied to the new node.\n* The Kubernetes control plane instances scaled up.\n* A new etcd member was added to the local/stacked etcd cluster.\n\nRun 'kubectl get nodes' to see this node join the cluster.\n`
      : `\nThis node has joined the cluster:\n* Certificate signing request was sent to apiserver and a response was received.\n* The Kubelet was informed of the new secure connection details.\n\nRun 'kubectl get nodes' on the control-plane to see this node join the cluster.\n`,
  );
  return 0;
}
