/**
 * The install steps of an upgrade, in kubeadm's documented order: the kubeadm package before `kubeadm
 * upgrade apply|node`, the kubelet and kubectl packages after it (and after the drain), so a failed
 * `kubeadm upgrade` never leaves a kubelet newer than the API server. Each is a command template (per
 * node or cluster-wide) with the version substituted.
 */
import type { KubeVersion } from "../kubeadm/types";

const APT_REPOSITORY = [
  "set -euo pipefail",
  "export DEBIAN_FRONTEND=noninteractive",
  "mkdir -p -m 0755 /etc/apt/keyrings",
  "curl -fsSL https://pkgs.k8s.io/core:/stable:/v{minor}/deb/Release.key | gpg --dearmor --yes -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg",
  "echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v{minor}/deb/ /' >/etc/apt/sources.list.d/kubernetes.list",
  "apt-get update -q",
];

/**
 * The default kubeadm install for Debian/Ubuntu with the community package repository (pkgs.k8s.io,
 * one repository per minor), as kubeadm's upgrade guide does it: point apt at the target minor's
 * repository, install exactly that kubeadm, and hold it. Runs before `kubeadm upgrade`. A bash command
 * template (string), the default of `kubeadmInstallCommand`: `{version}` becomes `1.34.2`, `{minor}` `1.34`.
 */
export const DEFAULT_KUBEADM_INSTALL_COMMAND = [
  ...APT_REPOSITORY,
  "apt-mark unhold kubeadm >/dev/null || true",
  "apt-get install -y -q --allow-downgrades kubeadm='{version}-*'",
  "apt-mark hold kubeadm",
].join("\n");

/**
 * The default kubelet and kubectl install for Debian/Ubuntu (pkgs.k8s.io): exactly that kubelet and
 * kubectl, held. Runs after `kubeadm upgrade` and the drain; the upgrade's `kubelet` step restarts the
 * kubelet afterwards, never this command. A bash command template (string), the default of
 * `kubeletInstallCommand`: `{version}` becomes `1.34.2`, `{minor}` `1.34`.
 */
export const DEFAULT_KUBELET_INSTALL_COMMAND = [
  ...APT_REPOSITORY,
  "apt-mark unhold kubelet kubectl >/dev/null || true",
  "apt-get install -y -q --allow-downgrades kubelet='{version}-*' kubectl='{version}-*'",
  "apt-mark hold kubelet kubectl",
].join("\n");

/**
 * The install command for `version`: `{version}` becomes `1.34.2`, `{minor}` becomes `1.34`. The
 * substituted values are digits and dots only, so they need no quoting.
 *
 * @param field the argument's name, for the error (`kubeadmInstallCommand`).
 * @throws Error when the template names another `{placeholder}`.
 */
export function renderInstallCommand(template: string, version: KubeVersion, field = "kubeadmInstallCommand"): string {
  return template.replace(/\{([a-z]*)\}/g, (whole, name: string) => {
    if (name === "version") return `${version.major}.${version.minor}.${version.patch}`;
    if (name === "minor") return `${version.major}.${version.minor}`;
    throw new Error(`${field}: unknown placeholder ${whole} (use {version} or {minor})`);
  });
}
