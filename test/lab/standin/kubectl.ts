/**
 * TEST DOUBLE, not real kubectl: the on-node `kubectl` of the lab (wrappers run `tsx kubectl.ts`
 * with LAB_DIR and LAB_NODE set). It needs credentials on the node, as kubectl does: the file named
 * by --kubeconfig, else $KUBECONFIG, else ~/.kube/config (paths under $LAB_ROOT when set). Without
 * them it fails like kubectl with no config. Commands: see kubectlcmd.ts.
 */
import { exists, Fail, runMain } from "./common";
import { kubeconfigFlag, kubectlCommand } from "./kubectlcmd";

export async function main(args: string[]): Promise<number> {
  const { kubeconfig, rest } = kubeconfigFlag(args);
  if (kubeconfig !== undefined) {
    if (!exists(kubeconfig)) throw new Fail(`error: stat ${kubeconfig}: no such file or directory`);
  } else {
    const env = process.env.KUBECONFIG;
    const home = `${process.env.HOME ?? "/root"}/.kube/config`;
    const candidates = env ? env.split(":").filter((x) => x !== "") : [home];
    if (!candidates.some((c) => exists(c))) {
      throw new Fail("The connection to the server localhost:8080 was refused - did you specify the right host or port?");
    }
  }
  return kubectlCommand(rest, { allowLab: false });
}

if (require.main === module) runMain(main);
