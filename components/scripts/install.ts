/**
 * The install step of an upgrade: a command template (per node or cluster-wide) that puts the target
 * kubeadm and kubelet on a node, with the version substituted.
 */
import type { KubeVersion } from "../kubeadm/types";

/**
 * The default for Debian/Ubuntu with the community package repository (pkgs.k8s.io, one repository
 * per minor), as kubeadm's installation guide sets it up: point apt at the target minor's repository,
 * install exactly that kubeadm, kubelet and kubectl, and hold them. The kubelet is restarted by the
 * upgrade step after `kubeadm upgrade`, not by this command.
 */
export const DEFAULT_INSTALL_COMMAND = [
  "set -euo pipefail",
  "export DEBIAN_FRONTEND=noninteractive",
  "mkdir -p -m 0755 /etc/apt/keyrings",
  "curl -fsSL https://pkgs.k8s.io/core:/stable:/v{minor}/deb/Release.key | gpg --dearmor --yes -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg",
  "echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v{minor}/deb/ /' >/etc/apt/sources.list.d/kubernetes.list",
  "apt-mark unhold kubeadm kubelet kubectl >/dev/null || true",
  "apt-get update -q",
  "apt-get install -y -q --allow-downgrades kubeadm='{version}-*' kubelet='{version}-*' kubectl='{version}-*'",
  "apt-mark hold kubeadm kubelet kubectl",
].join("\n");

/**
 * The install command for `version`: `{version}` becomes `1.34.2`, `{minor}` becomes `1.34`. The
 * substituted values are digits and dots only, so they need no quoting.
 *
 * @throws Error when the template names another `{placeholder}`.
 */
export function renderInstallCommand(template: string, version: KubeVersion): string {
  return template.replace(/\{([a-z]*)\}/g, (whole, name: string) => {
    if (name === "version") return `${version.major}.${version.minor}.${version.patch}`;
    if (name === "minor") return `${version.major}.${version.minor}`;
    throw new Error(`installCommand: unknown placeholder ${whole} (use {version} or {minor})`);
  });
}
