/**
 * What one step costs before any script logic: an SSH session that runs `true`, and one that runs the
 * stand-in (`kubeadm version -o short`, a tsx process on the node). Median of a few runs, on one node
 * of the running bench lab; lets the report tell lab cost from the component's own overhead.
 */
import { runOnNode } from "../nodes";
import { round } from "./bounds";
import { LAB_DIR } from "./lab";

export interface Calibration {
  ssh_true_s: number;
  ssh_standin_kubeadm_version_s: number;
  runs: number;
}

async function median(n: number, f: () => Promise<void>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await f();
    xs.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length / 2)] as number;
}

export async function calibrate(node: string, runs = 5): Promise<Calibration> {
  const run = async (cmd: string): Promise<void> => {
    const r = await runOnNode(node, cmd, undefined, { labDir: LAB_DIR });
    if (r.code !== 0) throw new Error(`calibrate: ${cmd} on ${node}: exit ${r.code}: ${r.stderr}`);
  };
  return {
    ssh_true_s: round(await median(runs, () => run("true")), 3),
    ssh_standin_kubeadm_version_s: round(await median(runs, () => run("kubeadm version -o short")), 3),
    runs,
  };
}
