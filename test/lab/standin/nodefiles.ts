/**
 * TEST DOUBLE (lab stand-in, not real kubeadm): the files kubeadm writes on a node, in kubeadm's
 * formats (kubeadm-facts.md, "Files on a node").
 */
import { parse } from "yaml";
import { exists, goQuote, goUnquote, readText, writeText, type Version } from "./common";
import { goYaml, KubeletArg, Obj } from "./kubeadmconfig";

export const KUBELET_DIR = "/var/lib/kubelet";
export const CONFIG_YAML = "/var/lib/kubelet/config.yaml";
export const FLAGS_ENV = "/var/lib/kubelet/kubeadm-flags.env";
export const INSTANCE_CONFIG = "/var/lib/kubelet/instance-config.yaml";

/** instance-config.yaml: exactly one line, the value Go-%q-quoted; mode 0644, directory 0700. */
export function writeInstanceConfig(endpoint: string): void {
  writeText(INSTANCE_CONFIG, `containerRuntimeEndpoint: ${goQuote(endpoint)}\n`, 0o644, 0o700);
}

/** The endpoint in instance-config.yaml, or undefined when the file is absent. */
export function readInstanceConfig(): string | undefined {
  const t = readText(INSTANCE_CONFIG);
  if (t === undefined) return undefined;
  const o = parse(t) as Obj | null;
  const v = o?.containerRuntimeEndpoint;
  return typeof v === "string" ? v : undefined;
}

/**
 * config.yaml: the cluster-wide KubeletConfiguration (kubelet-config ConfigMap), then the instance
 * config as a patch when NodeLocalCRISocket is in effect. Keys sorted, mode 0644. From 1.32 kubeadm's
 * KubeletConfiguration has the struct `crashLoopBackOff`, marshalled as `crashLoopBackOff: {}` even
 * when empty (seen by the fidelity test against real kubeadm).
 */
export function writeKubeletConfig(clusterKubelet: string, instanceEndpoint: string | undefined, minor: number): void {
  const o = parse(clusterKubelet) as Obj;
  if (minor >= 32 && o.crashLoopBackOff === undefined) o.crashLoopBackOff = {};
  if (instanceEndpoint !== undefined) o.containerRuntimeEndpoint = instanceEndpoint;
  writeText(CONFIG_YAML, goYaml(o), 0o644, 0o700);
}

/**
 * kubeadm-flags.env (WriteKubeletArgsToFile(own, kubeletExtraArgs)): from 1.32 kubeadm's own flags
 * sorted (those the user overrides dropped), then the user's in the order given; 1.31 sorts them all
 * together by name, then value (its ArgumentsToCommand, checked in source).
 */
export function renderFlagsEnv(own: KubeletArg[], user: KubeletArg[], minor: number): string {
  const userNames = new Set(user.map((a) => a.name));
  const kept = own.filter((a) => !userNames.has(a.name));
  return formatFlagsEnv(minor <= 31 ? sortArgs([...user, ...kept]) : [...sortArgs(kept), ...user]);
}

export function formatFlagsEnv(args: KubeletArg[]): string {
  return `KUBELET_KUBEADM_ARGS=${goQuote(args.map((a) => `--${a.name}=${a.value}`).join(" "))}\n`;
}

/** Parses kubeadm-flags.env; throws on a file kubeadm would not have written. */
export function parseFlagsEnv(text: string): KubeletArg[] {
  const line = text.split("\n").find((l) => l.startsWith("KUBELET_KUBEADM_ARGS="));
  if (line === undefined) return [];
  const raw = line.slice("KUBELET_KUBEADM_ARGS=".length).trim();
  const value = raw.startsWith('"') ? goUnquote(raw) : raw;
  return value
    .split(/\s+/)
    .filter((t) => t !== "")
    .map((t) => {
      const m = /^--?([^=]+)(?:=(.*))?$/.exec(t);
      if (!m) return { name: t, value: "" };
      return { name: m[1], value: m[2] ?? "" };
    });
}

export function readFlags(): KubeletArg[] | undefined {
  const t = readText(FLAGS_ENV);
  return t === undefined ? undefined : parseFlagsEnv(t);
}

/**
 * Whether kubeadm `v` fails to read a kubeadm-flags.env that holds no flags (`KUBELET_KUBEADM_ARGS=""`):
 * its ReadKubeletDynamicEnvFile returned `no flags found in file` up to v1.35.0 (checked in the source of
 * v1.32.13, v1.33.13, v1.34.0, v1.34.2, v1.34.4 and v1.35.0), and no flags, no error, from v1.35.1
 * (kubernetes#136127, cherry-picked to release-1.35 as #136131; checked in v1.35.1, v1.35.2, v1.35.4,
 * v1.36.3, v1.37.2). kubeadm 1.35.0 itself leaves such a file on a gate-on node with no other flag.
 */
export function emptyFlagsFail(v: Version): boolean {
  return v.major === 1 && (v.minor < 35 || (v.minor === 35 && v.patch === 0));
}

/**
 * kubeadm's ReadKubeletDynamicEnvFile + ArgumentsFromCommand (checked in kubeadm's source), as
 * upgrade reads kubeadm-flags.env: the whole text trimmed must start with `KUBELET_KUBEADM_ARGS=`,
 * quotes are trimmed (not unquoted), the value split on whitespace, a token without `=` takes the next
 * one as its value; tokens not of the form `--name=value` are skipped; the result is SORTED by name,
 * then value. No flags at all: an error for the kubeadm versions {@link emptyFlagsFail} names, else none.
 * Throws kubeadm's error texts (the caller wraps them in `error reading kubeadm flags file`).
 */
export function readFlagsAsKubeadm(kubeadm: Version): KubeletArg[] {
  const t = readText(FLAGS_ENV);
  if (t === undefined) throw new Error(`failed to read file: open ${FLAGS_ENV}: no such file or directory`);
  const content = t.trim();
  const prefix = "KUBELET_KUBEADM_ARGS=";
  if (!content.startsWith(prefix)) throw new Error(`the file ${JSON.stringify(FLAGS_ENV)} does not contain the  expected prefix ${JSON.stringify(prefix)}`);
  const fields = content.slice(prefix.length).replace(/^"+|"+$/g, "").split(/\s+/).filter((f) => f !== "");
  if (fields.length === 0 && emptyFlagsFail(kubeadm)) throw new Error(`no flags found in file ${JSON.stringify(FLAGS_ENV)}`);
  const tokens: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    if (fields[i].includes("=")) tokens.push(fields[i]);
    else if (i + 1 < fields.length) tokens.push(`${fields[i]}=${fields[++i]}`);
  }
  const args = tokens.flatMap((tok) => {
    const m = /^--([^=]+)=(.*)$/s.exec(tok);
    return m ? [{ name: m[1], value: m[2] }] : [];
  });
  return sortArgs(args);
}

/** ArgumentsToCommand's order: by name, then by value. */
export function sortArgs(args: KubeletArg[]): KubeletArg[] {
  return [...args].sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

/** kubeadm's WriteKubeletArgsToFile(flags, nil): every flag sorted, Go-%q-quoted, mode 0644. */
export function writeFlagsSorted(args: KubeletArg[]): void {
  writeText(FLAGS_ENV, formatFlagsEnv(sortArgs(args)), 0o644, 0o700);
}

/**
 * Post-upgrade's RemoveKubeletArgsFromFile (kubeadm 1.35+, checked in source): kubeadm-flags.env
 * rewritten without `names`, the rest SORTED (read as {@link readFlagsAsKubeadm} by `kubeadm`), and only
 * when a flag was removed. Returns whether one was. A missing file fails the backup, an unreadable one
 * fails the read, and so does one with no flags for kubeadm v1.35.0 ({@link emptyFlagsFail}; an upgrade
 * runs the target's kubeadm, so a node whose 1.35 kubeadm left `KUBELET_KUBEADM_ARGS=""` upgrades to
 * v1.35.1 and later).
 * @throws Error with kubeadm's text.
 */
export function removeFlags(names: string[], kubeadm: Version): boolean {
  if (names.length === 0) return false;
  if (!exists(FLAGS_ENV)) throw new Error(`error backing up the kubelet env file: stat ${FLAGS_ENV}: no such file or directory`);
  let args: KubeletArg[];
  try {
    args = readFlagsAsKubeadm(kubeadm);
  } catch (e) {
    throw new Error(`error reading kubelet env file: ${(e as Error).message}`);
  }
  const kept = args.filter((a) => !names.includes(a.name));
  if (kept.length === args.length) return false;
  writeFlagsSorted(kept);
  return true;
}

export function flagValue(args: KubeletArg[] | undefined, name: string): string | undefined {
  return args?.find((a) => a.name === name)?.value;
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");

/** A kubeconfig like kubeadm's (client credentials are lab placeholders). */
export function kubeconfig(server: string, caCert: string, user: string): string {
  return goYaml({
    apiVersion: "v1",
    clusters: [{ cluster: { "certificate-authority-data": b64(caCert), server: `https://${server}` }, name: "kubernetes" }],
    contexts: [{ context: { cluster: "kubernetes", user }, name: `${user}@kubernetes` }],
    "current-context": `${user}@kubernetes`,
    kind: "Config",
    preferences: {},
    users: [{ name: user, user: { "client-certificate-data": b64(`lab stand-in certificate for ${user}\n`), "client-key-data": b64("lab stand-in key\n") } }],
  });
}

export const CONTROL_PLANE_COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];

/** A static Pod manifest (abridged; the image tag is what upgrades change). */
export function manifest(component: string, kubernetesVersion: string, imageRepository = "registry.k8s.io"): string {
  const image = component === "etcd" ? `${imageRepository}/etcd:3.5.21-0` : `${imageRepository}/${component}:${kubernetesVersion}`;
  return goYaml({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { labels: { component, tier: "control-plane" }, name: component, namespace: "kube-system" },
    spec: { containers: [{ command: [component], image, name: component }], hostNetwork: true, priorityClassName: "system-node-critical" },
  });
}

export function writeControlPlaneFiles(kubernetesVersion: string): void {
  for (const c of CONTROL_PLANE_COMPONENTS) writeText(`/etc/kubernetes/manifests/${c}.yaml`, manifest(c, kubernetesVersion), 0o600);
}
