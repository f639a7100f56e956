/**
 * /var/lib/kubelet/instance-config.yaml, KEP-4656's node-local kubelet config patch.
 * Source: kubeadm `app/phases/kubelet/config.go` WriteInstanceConfigToDisk (checked in source):
 * `fmt.Sprintf("containerRuntimeEndpoint: %q\n", cfg.ContainerRuntimeEndpoint)`, mode 0644.
 */
import { normalizeCriSocket } from "./criSocket";
import { goQuote } from "./goQuote";

export { goQuote, goUnquote } from "./goQuote";

/** Path of the file on a node. */
export const INSTANCE_CONFIG_PATH = "/var/lib/kubelet/instance-config.yaml";

/**
 * The exact bytes kubeadm writes: `containerRuntimeEndpoint: "<endpoint, Go %q>"\n`. The endpoint
 * is normalised first (kubeadm prepends `unix://` before it writes).
 * @throws KubeadmConfigError (field `criSocket`) on an endpoint {@link normalizeCriSocket} refuses.
 */
export function renderInstanceConfig(endpoint: string): string {
  return `containerRuntimeEndpoint: ${goQuote(normalizeCriSocket(endpoint))}\n`;
}
