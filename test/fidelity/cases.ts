/**
 * The inputs of the fidelity test: every case is given, unchanged, to real kubeadm and to the lab's
 * kubeadm stand-in (test/lab/standin), and the files each writes are compared byte for byte.
 */
import { stringify } from "yaml";
import { RUNTIME_SOCKETS, Runtime } from "../lab/nodes/spec";

/** The hostname both runs see (a UTS namespace of their own); the stand-in reads it as $LAB_NODE. */
export const HOSTNAME = "node-1";

/** A socket no runtime owns; user patches and flags point the kubelet there. */
export const PATCHED_SOCKET = "/run/patched.sock";
/** {@link PATCHED_SOCKET} as a CRI endpoint. */
export const PATCHED_ENDPOINT = `unix://${PATCHED_SOCKET}`;

/** The directory of user kubelet patches inside the namespace (a bind mount of the case's own folder). */
export const PATCHES_DIR = "/etc/kubernetes/fidelity-patches";
/** The kubeadm config file inside the namespace. */
export const CONFIG_FILE = "/etc/kubernetes/fidelity-config.yaml";

/** The node-local instance configuration kubeadm writes with the gate on. */
export const INSTANCE_CONFIG = "/var/lib/kubelet/instance-config.yaml";
/** The KubeletConfiguration kubeadm writes. */
export const CONFIG_YAML = "/var/lib/kubelet/config.yaml";
/** The kubelet flags kubeadm writes. */
export const FLAGS_ENV = "/var/lib/kubelet/kubeadm-flags.env";
/** The kubelet files kubeadm's kubelet-start phase writes: the artifacts compared byte for byte. */
export const KUBELET_FILES = [INSTANCE_CONFIG, CONFIG_YAML, FLAGS_ENV] as const;

/** How a case sets the NodeLocalCRISocket gate in ClusterConfiguration.featureGates. */
export type Gate = "default" | "on" | "off";
/** Every gate setting, in table order: key absent, `true`, `false`. */
export const GATES: readonly Gate[] = ["default", "on", "off"];

/** One node setup and InitConfiguration, independent of the minor and the gate. */
export interface FidelityInput {
  /** short name, used in the table */
  id: string;
  /** what the input exercises, for the README */
  title: string;
  /** runtimes whose sockets listen on the node */
  sockets: Runtime[];
  /** nodeRegistration.criSocket (absent: kubeadm detects the socket) */
  criSocket?: string;
  /** nodeRegistration.name (default {@link HOSTNAME}) */
  nodeName?: string;
  /** nodeRegistration.kubeletExtraArgs, v1beta4 list form */
  kubeletExtraArgs?: { name: string; value: string }[];
  /** the gate settings this input runs with (all when absent) */
  onlyGates?: Gate[];
  /** more ClusterConfiguration.featureGates entries */
  extraGates?: Record<string, boolean>;
  /** a kubeletconfiguration patch that sets containerRuntimeEndpoint: given with `--patches` or in the config */
  patches?: "flag" | "config";
}

/** The inputs, in table order. */
export const INPUTS: readonly FidelityInput[] = [
  { id: "detected", title: "no criSocket, containerd's socket listening (kubeadm detects it)", sockets: ["containerd"] },
  {
    id: "declared",
    title: "criSocket unix:///var/run/crio/crio.sock, containerd and CRI-O listening",
    sockets: ["containerd", "crio"],
    criSocket: "unix:///var/run/crio/crio.sock",
  },
  { id: "no-scheme", title: "criSocket /var/run/crio/crio.sock (no unix:// scheme)", sockets: ["crio"], criSocket: "/var/run/crio/crio.sock" },
  { id: "two-found", title: "no criSocket, containerd and CRI-O listening (detection finds two)", sockets: ["containerd", "crio"] },
  {
    id: "patch-flag",
    title: `a user kubelet patch setting containerRuntimeEndpoint: ${PATCHED_ENDPOINT}, given with \`--patches\` beside \`--config\``,
    sockets: ["containerd"],
    criSocket: "unix:///run/containerd/containerd.sock",
    patches: "flag",
  },
  {
    id: "patch-config",
    title: `the same patch named by InitConfiguration \`patches.directory\` (how a config file gives patches)`,
    sockets: ["containerd"],
    criSocket: "unix:///run/containerd/containerd.sock",
    patches: "config",
  },
  {
    id: "user-flag",
    title: `kubeletExtraArgs container-runtime-endpoint=${PATCHED_ENDPOINT}`,
    sockets: ["containerd"],
    criSocket: "unix:///run/containerd/containerd.sock",
    kubeletExtraArgs: [{ name: "container-runtime-endpoint", value: PATCHED_ENDPOINT }],
  },
  {
    id: "extra-args",
    title: "node name worker-1 (not the hostname), kubeletExtraArgs v=2 then node-ip=10.0.0.5",
    sockets: ["containerd"],
    nodeName: "worker-1",
    kubeletExtraArgs: [
      { name: "v", value: "2" },
      { name: "node-ip", value: "10.0.0.5" },
    ],
  },
  {
    id: "bad-gate",
    title: "featureGates names NoSuchGate: true (a gate kubeadm does not know)",
    sockets: ["containerd"],
    // Gate absent only: with two unknown gates (NodeLocalCRISocket on 1.31 and 1.37) kubeadm lists its
    // errors in Go map iteration order, which is random.
    onlyGates: ["default"],
    extraGates: { NoSuchGate: true },
  },
];

/** The kubeadm command a case compares. */
export type Phase = "kubelet-start" | "upgrade-node" | "upload-config";

/** What every case has: a kubeadm version, a gate setting, an input (by id) and the phase. */
export interface CaseKey {
  /** kubeadm version, vX.Y.Z */
  version: string;
  minor: number;
  gate: Gate;
  input: { id: string };
  phase: Phase;
}

/** One `init phase kubelet-start` run: an input at a kubeadm version with a gate setting. */
export interface FidelityCase extends CaseKey {
  input: FidelityInput;
  phase: "kubelet-start";
}

/** The minor of a vX.Y.Z version. */
export function minorOf(version: string): number {
  const m = /^v1\.(\d+)\.\d+$/.exec(version);
  if (!m) throw new Error(`not a v1.Y.Z version: ${version}`);
  return Number(m[1]);
}

/** Every case for the given versions: versions x gates x inputs (as the input allows), in table order. */
export function allCases(versions: readonly string[]): FidelityCase[] {
  return versions.flatMap((version) =>
    GATES.flatMap((gate) => INPUTS.filter((i) => !i.onlyGates || i.onlyGates.includes(gate)).map((input) => ({ version, minor: minorOf(version), gate, input, phase: "kubelet-start" as const }))),
  );
}

/** The listening socket paths of an input (always with {@link PATCHED_SOCKET}, so a patched kubelet could start). */
export function socketPaths(input: FidelityInput): string[] {
  return [...input.sockets.map((r) => RUNTIME_SOCKETS[r]), PATCHED_SOCKET];
}

/** ClusterConfiguration.featureGates of a case: NodeLocalCRISocket as the gate setting says, plus any extra gates. */
export function featureGates(gate: Gate, extra?: Record<string, boolean>): Record<string, boolean> {
  return { ...(gate !== "default" ? { NodeLocalCRISocket: gate === "on" } : {}), ...extra };
}

/** The kubeadm config file of a case: InitConfiguration + ClusterConfiguration, v1beta4. */
export function renderConfig(c: FidelityCase): string {
  const nodeRegistration: Record<string, unknown> = { name: c.input.nodeName ?? HOSTNAME };
  if (c.input.criSocket !== undefined) nodeRegistration.criSocket = c.input.criSocket;
  if (c.input.kubeletExtraArgs) nodeRegistration.kubeletExtraArgs = c.input.kubeletExtraArgs;
  const init: Record<string, unknown> = {
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "InitConfiguration",
    localAPIEndpoint: { advertiseAddress: "10.0.0.5", bindPort: 6443 },
    nodeRegistration,
  };
  if (c.input.patches === "config") init.patches = { directory: PATCHES_DIR };
  const cluster: Record<string, unknown> = {
    apiVersion: "kubeadm.k8s.io/v1beta4",
    kind: "ClusterConfiguration",
    kubernetesVersion: c.version,
  };
  const gates = featureGates(c.gate, c.input.extraGates);
  if (Object.keys(gates).length > 0) cluster.featureGates = gates;
  return `${stringify(init)}---\n${stringify(cluster)}`;
}

/** The user patch files of a case (file name -> content), empty without patches. */
export function patchFiles(c: FidelityCase): Record<string, string> {
  return c.input.patches ? { "kubeletconfiguration+strategic.yaml": `containerRuntimeEndpoint: ${PATCHED_ENDPOINT}\n` } : {};
}

/** `kubeadm init phase kubelet-start` arguments of a case. */
export function phaseArgs(c: FidelityCase): string[] {
  return ["init", "phase", "kubelet-start", "--config", CONFIG_FILE, ...(c.input.patches === "flag" ? ["--patches", PATCHES_DIR] : [])];
}

/** The stand-in's fallback while it has no `init phase kubelet-start`: a whole `init`, whose kubelet-start phase writes the same files. */
export function initArgs(c: FidelityCase): string[] {
  return ["init", "--config", CONFIG_FILE, ...(c.input.patches === "flag" ? ["--patches", PATCHES_DIR] : [])];
}
