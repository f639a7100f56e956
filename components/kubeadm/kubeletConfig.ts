/**
 * The `containerRuntimeEndpoint` field of /var/lib/kubelet/config.yaml (KubeletConfiguration,
 * kubelet.config.k8s.io/v1beta1). kubeadm writes this file with a Go marshaller: top-level keys
 * sorted, block style, `containerRuntimeEndpoint: ""` before any patch sets it; it applies
 * instance-config.yaml as a patch last (kubeadm-facts.md, "Files on a node"). The kubelet also
 * accepts a JSON config; JSON stays JSON.
 */
import { isScalar } from "yaml";
import { normalizeCriSocket } from "./criSocket";
import { blockScalarText, FileEditError, findPair, insertPair, parseMapDoc, replaceScalar } from "./yamlEdit";

const FILE = "config.yaml";
const KEY = "containerRuntimeEndpoint";

function load(kubeletConfig: string) {
  return parseMapDoc(kubeletConfig, FILE, "KubeletConfiguration", "kubelet.config.k8s.io");
}

/**
 * The `containerRuntimeEndpoint` of a kubelet config file: the string as written (`""` when kubeadm
 * left it empty), or undefined when the key is absent or null.
 * @throws FileEditError on input {@link setContainerRuntimeEndpoint} refuses, or a non-string value.
 */
export function getContainerRuntimeEndpoint(kubeletConfig: string): string | undefined {
  const md = load(kubeletConfig);
  const pair = findPair(md, md.root, KEY);
  if (!pair || pair.value === null || (isScalar(pair.value) && pair.value.value === null)) return undefined;
  if (!isScalar(pair.value) || typeof pair.value.value !== "string") {
    throw new FileEditError(FILE, `${KEY} is not a string`);
  }
  return pair.value.value;
}

/**
 * config.yaml with `containerRuntimeEndpoint` set to the normalised endpoint, every other byte kept.
 * - Key present: only its value changes (quoting style kept: plain, single or double quotes).
 * - Key absent: inserted where kubeadm's sorted marshaller puts it when the top-level keys are
 *   sorted (go-yaml order), else appended after the last key; JSON gets `"containerRuntimeEndpoint": "..."`
 *   with the separators the file already uses.
 * @returns the same string when the value is already equal.
 * @throws KubeadmConfigError (field `criSocket`) on an endpoint {@link normalizeCriSocket} refuses.
 * @throws FileEditError on parse errors, several documents, a root that is not a map, duplicate
 *   keys, merge keys, aliases/anchors/tags on the key or value, a block scalar value, or a `kind`
 *   other than KubeletConfiguration.
 */
export function setContainerRuntimeEndpoint(kubeletConfig: string, endpoint: string): string {
  const value = normalizeCriSocket(endpoint);
  const md = load(kubeletConfig);
  const pair = findPair(md, md.root, KEY);
  if (pair) {
    if (isScalar(pair.value) && pair.value.value === value) return kubeletConfig;
    if (isScalar(pair.value) && pair.value.value !== null && typeof pair.value.value !== "string") {
      throw new FileEditError(FILE, `${KEY} is not a string`);
    }
    return replaceScalar(md, pair, value, md.root.flow === true);
  }
  return insertPair(md, md.root, KEY, (indent) => `${indent}${KEY}: ${blockScalarText(value)}\n`, JSON.stringify(value));
}
