/**
 * Test data: the kubelet files as kubeadm writes them (formats from shared/kubeadm-facts.md), and the
 * `pk-file` snapshot lines a node script prints for them.
 */
import { createHash } from "crypto";

/** config.yaml as kubeadm's marshaller writes it (keys sorted), with the given containerRuntimeEndpoint. */
export function kubeletConfigYaml(endpoint: string): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "authentication:",
    "  anonymous:",
    "    enabled: false",
    "cgroupDriver: systemd",
    "clusterDNS:",
    "- 10.96.0.10",
    "clusterDomain: cluster.local",
    `containerRuntimeEndpoint: ${endpoint === "" ? '""' : endpoint}`,
    "healthzBindAddress: 127.0.0.1",
    "healthzPort: 10248",
    "kind: KubeletConfiguration",
    "rotateCertificates: true",
    "staticPodPath: /etc/kubernetes/manifests",
    "",
  ].join("\n");
}

/** kubeadm-flags.env: kubeadm's own flags sorted, then the user's. */
export function flagsEnv(flags: string[]): string {
  return `KUBELET_KUBEADM_ARGS="${flags.join(" ")}"\n`;
}

/** The files a node has after kubeadm init/join, legacy (flag) or node-local (instance config). */
export function kubeadmFiles(nodeLocal: boolean, endpoint: string, userFlags: string[] = []): Record<string, string | undefined> {
  const own = ["--pod-infra-container-image=registry.k8s.io/pause:3.10"];
  return {
    "/var/lib/kubelet/instance-config.yaml": nodeLocal ? `containerRuntimeEndpoint: "${endpoint}"\n` : undefined,
    "/var/lib/kubelet/config.yaml": kubeletConfigYaml(nodeLocal ? endpoint : ""),
    "/var/lib/kubelet/kubeadm-flags.env": flagsEnv([
      ...(nodeLocal ? [] : [`--container-runtime-endpoint=${endpoint}`]),
      ...own,
      ...userFlags,
    ]),
  };
}

/** What `pk_snapshot` prints for these files. */
export function snapshotOf(files: Record<string, string | undefined>): string {
  return Object.entries(files)
    .map(([path, content]) =>
      content === undefined
        ? `pk-file ${path} absent -`
        : `pk-file ${path} ${createHash("sha256").update(content).digest("hex")} ${Buffer.from(content).toString("base64")}`,
    )
    .join("\n")
    .concat("\n");
}
