/**
 * TEST DOUBLE, not the real kubelet binary: the node's `kubelet` command, which answers only
 * `kubelet --version` (`Kubernetes v1.34.2`, from the installed kubelet version: installedKubeletVersion).
 * The lab's kubelet itself is run by the systemctl stand-in. Run with LAB_DIR and LAB_NODE set.
 */
import { Fail, installedKubeletVersion, runMain } from "./common";

export async function main(args: string[]): Promise<number> {
  if (args[0] === "--version" || args[0] === "version") {
    process.stdout.write(`Kubernetes ${installedKubeletVersion().text}\n`);
    return 0;
  }
  throw new Fail(`lab stand-in kubelet: only --version is served, got ${JSON.stringify(args.join(" "))}`, 2);
}

if (require.main === module) runMain(main);
