/**
 * What a node's kubelet files must hold after kubeadm has run, per the gate (kubeadm-facts.md, "Files
 * on a node"): the pure decision behind the `kubelet` step. The node reads its files in an
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
  /**
   * Write whatever the file holds now (no compare-and-swap; still backed up and journaled): only for a
   * file the step cannot have read first and whose whole content the plan decides.
   */
  overwrite?: boolean;
}

/**
 * The change the `upgrade` step makes just before `kubeadm upgrade`: with the gate in effect,
 * instance-config.yaml becomes exactly `renderInstanceConfig(endpoint)`, whatever it held. kubeadm
 * then always reads the node's real socket from it, and never makes the file itself: 1.33-1.36 would
 * build a missing one from the kubeadm-flags.env flag (`containerRuntimeEndpoint: ""` when the flag is
 * gone, a failure when the file holds no flags), 1.37 from the socket it detects (containerd when it
 * finds several runtimes), and no version rewrites a stale one (a runtime switch). With the file
 * present, kubeadm 1.33-1.36 keep the flag: the `kubelet` step removes it. Nothing with the gate off.
 * @throws KubeadmConfigError (field `criSocket`) on an endpoint {@link renderInstanceConfig} refuses.
 */
export function preUpgradeFileChanges(nodeLocalCriSocket: boolean, endpoint: string): FileChange[] {
  if (!nodeLocalCriSocket) return [];
  const path = KUBELET_FILES.instanceConfig;
  return [{ path, expected: { path }, content: renderInstanceConfig(endpoint), mode: "0644", overwrite: true }];
}

/**
 * The changes that make a node's kubelet files what kubeadm 1.33+ leaves for this gate state.
 * - Gate in effect (KEP-4656): instance-config.yaml is exactly `renderInstanceConfig(endpoint)` (mode
 *   0644; a stale one, left by a runtime switch, is rewritten: kubeadm never rewrites it); config.yaml's
 *   `containerRuntimeEndpoint` equals the endpoint (when config.yaml exists); kubeadm-flags.env has no
 *   `--container-runtime-endpoint` (kubeadm 1.32 leaves it, #129278, and 1.33-1.36 leave it whenever
 *   instance-config.yaml already existed).
 * - Gate not in effect (legacy): kubeadm-flags.env carries `--container-runtime-endpoint=<endpoint>`
 *   and there is no instance-config.yaml (kubeadm with the gate off neither removes one left from an
 *   earlier gate-on run nor puts the flag back); config.yaml is left as kubeadm wrote it.
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
