/**
 * What README names as the package's exports is exported: the default install command templates,
 * which a user composes their own install command from (README, "Upgrades").
 */
import * as pkg from "../../../components";
import { renderInstallCommand } from "../../../components/scripts/install";
import { parseKubernetesVersion } from "../../../components/kubeadm/version";

test("the default install commands are exported, as templates of the version and minor", () => {
  const v = parseKubernetesVersion("v1.34.2");
  expect(renderInstallCommand(pkg.DEFAULT_KUBEADM_INSTALL_COMMAND, v, "kubeadmInstallCommand")).toContain("kubeadm='1.34.2-*'");
  expect(renderInstallCommand(pkg.DEFAULT_KUBELET_INSTALL_COMMAND, v, "kubeletInstallCommand")).toContain("kubelet='1.34.2-*'");
  expect(pkg.DEFAULT_KUBEADM_INSTALL_COMMAND).toContain("pkgs.k8s.io/core:/stable:/v{minor}/deb/");
});
