/**
 * What a node's kubelet files must hold after kubeadm has run, per the gate (kubeadm-facts.md, "Files
 * on a node"): the pure decision behind the `kubelet-files` step. The node reads its files in an
 * earlier command; this turns what it read into the changes to make.
 */
import { renderInstanceConfig } from "./instanceConfig";
import { setContainerRuntimeEndpoint } from "./kubeletConfig";
import { addContainerRuntimeEndpointFlag, removeContainerRuntimeEndpointFlag } from "./flagsEnv";

/** The kubelet files this project reads and writes, at kubeadm's paths. */
export const KUBELET_FILES = {
  instanceConfig: "/var/lib/kubelet/instance-config.yaml",
  config: "/var/lib/kubelet/config.yaml",
  flagsEnv: "/var/lib/kubelet/kubeadm-flags.env",
} as const;

/** A file as a node reported it. */
export interface FileState {
  path: string;
  /** sha256 of the bytes, hex; undefined when the file is absent. */
  sha256?: string;
  /** The file's text; undefined when absent. */
  content?: string;
}

/** A wanted change: write `content` with `mode` (octal text), or remove the file (content undefined). */
export interface FileChange {
  path: string;
  /** The file as it was read: the node refuses the change if the file is now neither this nor the wanted content. */
  expected: FileState;
  content?: string;
  mode?: string;
}

/**
 * The changes that make a node's kubelet files what kubeadm 1.33+ leaves for this gate state.
 * - Gate in effect (KEP-4656): instance-config.yaml is exactly `renderInstanceConfig(endpoint)` (mode
 *   0644); config.yaml's `containerRuntimeEndpoint` equals the endpoint (when config.yaml exists);
 *   kubeadm-flags.env has no `--container-runtime-endpoint` (kubeadm 1.32 leaves it, #129278).
 * - Gate not in effect (legacy): kubeadm-flags.env carries `--container-runtime-endpoint=<endpoint>`
 *   and there is no instance-config.yaml; config.yaml is left as kubeadm wrote it.
 * Files absent on the node other than instance-config.yaml are not created (kubeadm writes them).
 *
 * @param read the files as read on the node, by path (missing entries count as absent).
 * @returns only the changes that alter something; empty when the node is already right.
 * @throws Error (from the transforms) when a file cannot be edited safely.
 */
export function kubeletFileChanges(
  nodeLocalCriSocket: boolean,
  endpoint: string,
  read: ReadonlyMap<string, FileState>,
): FileChange[] {
  const state = (path: string): FileState => read.get(path) ?? { path };
  const changes: FileChange[] = [];
  const want = (path: string, content: string | undefined) => {
    const expected = state(path);
    if (content !== expected.content) changes.push({ path, expected, content, mode: "0644" });
  };
  const instance = state(KUBELET_FILES.instanceConfig);
  const config = state(KUBELET_FILES.config);
  const flags = state(KUBELET_FILES.flagsEnv);
  if (nodeLocalCriSocket) {
    want(instance.path, renderInstanceConfig(endpoint));
    if (config.content !== undefined) want(config.path, setContainerRuntimeEndpoint(config.content, endpoint));
    if (flags.content !== undefined) want(flags.path, removeContainerRuntimeEndpointFlag(flags.content).text);
  } else {
    if (instance.content !== undefined) want(instance.path, undefined);
    if (flags.content !== undefined) want(flags.path, addContainerRuntimeEndpointFlag(flags.content, endpoint));
  }
  return changes;
}
