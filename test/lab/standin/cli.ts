/**
 * TEST DOUBLE, not real kubectl: `npm run lab -- kubectl ...` on the host asks the lab's cluster
 * store as the cluster admin (no kubeconfig needed). Besides the kubectl subset of kubectlcmd.ts it
 * takes the lab controls `kubectl lab block-drain <node> [reason]` and `kubectl lab unblock-drain <node>`.
 * LAB_DIR defaults to `<repo>/.lab`.
 */
import { DEFAULT_LAB_DIR } from "../nodes/paths";
import { Fail } from "./common";
import { kubeconfigFlag, kubectlCommand } from "./kubectlcmd";

export async function kubectl(args: string[]): Promise<number> {
  if (!process.env.LAB_DIR) process.env.LAB_DIR = DEFAULT_LAB_DIR;
  try {
    return await kubectlCommand(kubeconfigFlag(args).rest, { allowLab: true });
  } catch (e) {
    if (e instanceof Fail) {
      process.stderr.write(e.message.endsWith("\n") ? e.message : `${e.message}\n`);
      return e.code;
    }
    throw e;
  }
}
