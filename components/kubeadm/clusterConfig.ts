/**
 * The `featureGates` map of kubeadm's ClusterConfiguration, as stored in the ConfigMap
 * `kube-system/kubeadm-config`, data key `ClusterConfiguration` (v1beta4 from 1.31). Flipping the
 * gate on an existing cluster = edit this map, then run upgrade (kubeadm-facts.md, "Cluster side";
 * what the kinder e2e test does). The ConfigMap stores only explicit entries: an absent key means
 * the version's default (#132303).
 */
import { isMap, isScalar, YAMLMap } from "yaml";
import { blockScalarText, FileEditError, findPair, insertPair, nestedIndentStep, parseMapDoc, removeBlockPair, replaceScalar } from "./yamlEdit";

const FILE = "ClusterConfiguration";
const MAP_KEY = "featureGates";

/**
 * The ClusterConfiguration with `featureGates.<name>` set to `value`, or removed when `value` is
 * undefined; every other byte kept.
 * - Setting: an existing entry changes value only; a new entry goes at its sorted position in the
 *   map (kubeadm marshals sorted) or at the end if the map is unsorted; a missing `featureGates`
 *   map is created (at its sorted top-level position, indented like the file's other nested maps).
 * - Removing: the entry's line goes; when that empties the map, the `featureGates` key goes too,
 *   whoever created it, because kubeadm never writes an empty featureGates (omitempty) and an empty
 *   map means the same as none. Comment lines above a removed entry stay.
 * @returns the same string when nothing changes (already set to that value, or already absent).
 * @throws FileEditError on parse errors, several documents, a kind other than ClusterConfiguration,
 *   `featureGates` not a map (or flow-style when it must be edited), an existing entry that is not
 *   a boolean, aliases/anchors/tags, merge keys.
 * @throws Error when `name` is not a feature gate name (letters and digits, leading letter).
 */
export function setFeatureGate(clusterConfiguration: string, name: string, value: boolean | undefined): string {
  if (typeof name !== "string" || !/^[A-Za-z][A-Za-z0-9]*$/.test(name)) {
    throw new Error(`setFeatureGate: ${JSON.stringify(name)} is not a feature gate name`);
  }
  if (value !== undefined && typeof value !== "boolean") {
    throw new Error(`setFeatureGate: value must be true, false or undefined`);
  }
  const md = parseMapDoc(clusterConfiguration, FILE, "ClusterConfiguration", "kubeadm.k8s.io");
  const gatesPair = findPair(md, md.root, MAP_KEY);
  const gatesNull = !gatesPair || gatesPair.value === null || (isScalar(gatesPair.value) && gatesPair.value.value === null);
  if (gatesNull) {
    if (value === undefined) return clusterConfiguration;
    if (gatesPair) throw new FileEditError(FILE, `${MAP_KEY} is null; refusing to edit`);
    const step = " ".repeat(nestedIndentStep(md, md.root));
    return insertPair(
      md,
      md.root,
      MAP_KEY,
      (indent) => `${indent}${MAP_KEY}:\n${indent}${step}${blockScalarText(name)}: ${value}\n`,
      `{${JSON.stringify(name)}: ${value}}`,
    );
  }
  const gates = gatesPair!.value;
  if (!isMap(gates)) throw new FileEditError(FILE, `${MAP_KEY} is not a map`);
  const map = gates as YAMLMap;
  for (const p of map.items) {
    if (!isScalar(p.key)) throw new FileEditError(FILE, `${MAP_KEY} has a key that is not a scalar`);
  }
  const entry = findPair(md, map, name);
  if (entry) {
    if (!isScalar(entry.value) || typeof entry.value.value !== "boolean") {
      throw new FileEditError(FILE, `${MAP_KEY}.${name} is not a boolean`);
    }
    if (value === entry.value.value) return clusterConfiguration;
    if (value !== undefined) return replaceScalar(md, entry, value, map.flow === true);
    return map.items.length === 1 ? removeBlockPair(md, md.root, gatesPair!) : removeBlockPair(md, map, entry);
  }
  if (value === undefined) return clusterConfiguration;
  return insertPair(md, map, name, (indent) => `${indent}${blockScalarText(name)}: ${value}\n`, String(value));
}
