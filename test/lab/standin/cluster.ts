/**
 * TEST DOUBLE (lab stand-in, not real kubeadm): cluster-side pieces shared by init, join, token and
 * upgrade: the CA, bootstrap tokens, the uploaded-certs key, Node registration, and the kubelet
 * files a node gets (kubelet-start phase).
 */
import { execFileSync } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { clockMs, labDir, nodeName, writeText, hostname } from "./common";
import { KubeletArg, NodeRegistration } from "./kubeadmconfig";
import { FLAGS_ENV, renderFlagsEnv, writeInstanceConfig, writeKubeletConfig } from "./nodefiles";
import { detectCriSocket, normaliseCriSocket } from "./cri";
import { kubeletCheck, startKubelet } from "./kubelet";
import { CRI_SOCKET_ANNOTATION, NodeObject, now, Store, Taint } from "./store";
import { kubeadmError, pauseImage, phaseError } from "./versions";


/** A new self-signed CA (EC P-256 via openssl) and kubeadm's hash of its public key. */
export function newCA(): { cert: string; key: string; hash: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-ca-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", path.join(dir, "ca.key"), "-out", path.join(dir, "ca.crt"), "-subj", "/CN=kubernetes", "-days", "3650",
    ], { stdio: ["ignore", "ignore", "pipe"] });
    const cert = fs.readFileSync(path.join(dir, "ca.crt"), "utf8");
    const key = fs.readFileSync(path.join(dir, "ca.key"), "utf8");
    return { cert, key, hash: caHash(cert) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `sha256:<hex>` of the certificate's SubjectPublicKeyInfo, as kubeadm pins it. */
export function caHash(certPem: string): string {
  const spki = new crypto.X509Certificate(certPem).publicKey.export({ type: "spki", format: "der" });
  return `sha256:${crypto.createHash("sha256").update(spki).digest("hex")}`;
}

function randomChars(n: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.randomBytes(n);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

export const TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

/** Adds a bootstrap token (given or random); ttl in seconds, 0 = never expires. */
export function addToken(s: Store, ttlSeconds: number, token?: string): string {
  const t = token ?? `${randomChars(6)}.${randomChars(16)}`;
  const m = TOKEN_RE.exec(t);
  if (!m) throw new Error(`bad token ${t}`);
  s.tokens = s.tokens.filter((x) => x.id !== m[1]);
  s.tokens.push({ id: m[1], secret: m[2], expires: ttlSeconds > 0 ? clockMs() + ttlSeconds * 1000 : null });
  return t;
}

export function newCertificateKey(): string {
  return crypto.randomBytes(32).toString("hex");
}

/** Stores the kubeadm-certs Secret encrypted with `key` (the previous one is replaced). */
export function uploadCerts(s: Store, key: string, ttlSeconds: number): void {
  s.certs = { key, expires: clockMs() + ttlSeconds * 1000 };
}

/** kubeadm's join hint, with its trailing space. */
export function joinCommand(s: Store, token: string): string {
  return `kubeadm join ${s.apiEndpoint} --token ${token} --discovery-token-ca-cert-hash ${s.ca?.hash} `;
}

/** This node's address from `$LAB_DIR/nodes/<name>/node.json`, else 127.0.0.1. */
export function nodeAddress(): string {
  try {
    const j = JSON.parse(fs.readFileSync(path.join(labDir(), "nodes", nodeName(), "node.json"), "utf8")) as { address?: string };
    return j.address ?? "127.0.0.1";
  } catch {
    return "127.0.0.1";
  }
}

export const CONTROL_PLANE_TAINT: Taint = { key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" };

/** The Node object as the kubelet registers it and kubeadm marks it. */
export function newNode(s: Store, opts: { name: string; controlPlane: boolean; taints: Taint[]; criAnnotation?: string; version: string }): NodeObject {
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": opts.name,
    "kubernetes.io/os": "linux",
  };
  if (opts.controlPlane) {
    labels["node-role.kubernetes.io/control-plane"] = "";
    labels["node.kubernetes.io/exclude-from-external-load-balancers"] = "";
  }
  const annotations: Record<string, string> = {
    "node.alpha.kubernetes.io/ttl": "0",
    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
  };
  if (opts.criAnnotation !== undefined) annotations[CRI_SOCKET_ANNOTATION] = opts.criAnnotation;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: opts.name, labels, annotations, creationTimestamp: now(), resourceVersion: String(++s.revision) },
    spec: opts.taints.length > 0 ? { taints: opts.taints } : {},
    status: {
      conditions: [{ type: "Ready", status: "False", reason: "KubeletNotReady", message: "kubelet is starting", lastHeartbeatTime: now() }],
      nodeInfo: { kubeletVersion: opts.version, containerRuntimeVersion: "lab://stand-in", operatingSystem: "linux", architecture: "amd64" },
    },
  };
}

function taintArg(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;
}

/**
 * kubelet-start phase: config.yaml, kubeadm-flags.env and (gate in effect) instance-config.yaml.
 * kubeadm's own flags: --container-runtime-endpoint (gate not in effect), --pod-infra-container-image
 * (up to 1.34), --hostname-override (node name differs from the hostname, here $LAB_NODE),
 * --register-with-taints (worker joins with taints).
 */
export function writeKubeletStart(opts: {
  minor: number;
  gateOn: boolean;
  endpoint: string;
  clusterKubelet: string;
  reg: NodeRegistration;
  name: string;
  registerTaints?: Taint[];
}): void {
  const own: KubeletArg[] = [];
  if (!opts.gateOn) own.push({ name: "container-runtime-endpoint", value: opts.endpoint });
  if (opts.minor <= 34) own.push({ name: "pod-infra-container-image", value: pauseImage(opts.minor) });
  if (opts.name !== hostname()) own.push({ name: "hostname-override", value: opts.name });
  if (opts.registerTaints && opts.registerTaints.length > 0) own.push({ name: "register-with-taints", value: opts.registerTaints.map(taintArg).join(",") });
  writeText(FLAGS_ENV, renderFlagsEnv(own, opts.reg.kubeletExtraArgs, opts.minor), 0o644, 0o700);
  if (opts.gateOn) writeInstanceConfig(opts.endpoint);
  writeKubeletConfig(opts.clusterKubelet, opts.gateOn ? opts.endpoint : undefined, opts.minor);
}

/**
 * The kubelet-start phase of init and join: write the files, start the kubelet, and fail the phase
 * (`failPhase`, `failPrefix`: UNVERIFIED wording) when the stand-in kubelet would not start.
 */
export async function kubeletStartPhase(opts: Parameters<typeof writeKubeletStart>[0], failPhase: string, failPrefix: string): Promise<void> {
  writeKubeletStart(opts);
  const env = `[kubelet-start] Writing kubelet environment file with flags to file "/var/lib/kubelet/kubeadm-flags.env"\n`;
  const cfg = `[kubelet-start] Writing kubelet configuration to file "/var/lib/kubelet/config.yaml"\n`;
  process.stdout.write(
    (failPhase === "kubelet-start" ? cfg + env : env + cfg) +
      (opts.gateOn ? `[kubelet-start] Writing instance kubelet configuration to file "/var/lib/kubelet/instance-config.yaml"\n` : "") +
      `[kubelet-start] Starting the kubelet\n`,
  );
  const health = kubeletCheck();
  if (!health.ok) {
    await startKubelet();
    throw phaseError(opts.minor, failPhase, `${failPrefix}: the kubelet is not healthy: ${health.reason}`);
  }
}

/** The node's CRI endpoint: the configured one normalised (with kubeadm's warning), else detected. */
export function resolveCriSocket(minor: number, criSocket: string | undefined): string {
  if (criSocket !== undefined) return normaliseCriSocket(criSocket, (m) => klogWarning("initconfiguration.go:120", m));
  const d = detectCriSocket();
  if ("error" in d) throw kubeadmError(minor, d.error);
  return d.endpoint;
}

/** klog-style warning line on stderr (kubeadm prints its warnings through klog). */
export function klogWarning(file: string, msg: string): void {
  const d = new Date(clockMs());
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  const ts = `${pad(d.getMonth() + 1)}${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds() * 1000, 6)}`;
  process.stderr.write(`W${ts} ${String(process.pid).padStart(7)} ${file}] ${msg}\n`);
}
