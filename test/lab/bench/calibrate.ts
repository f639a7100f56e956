/**
 * What one step costs before any script logic, on a node of the running bench lab: an SSH session
 * running `true` as OpenSSH's client makes it by default (the floor's, an operator's `ssh`) and as the
 * lab's command provider makes it (offering the key exchanges of pulumi-command's Go client,
 * test/lab/provider/ssh.ts), and SSH sessions running the stand-in's `kubeadm version -o short` bundled
 * (node on one JavaScript file, as the nodes run it) and through tsx (as they ran it before). Samples
 * alternate between the four, so load lands on all of them alike.
 */
import { runOnNode } from "../nodes";
import { buildStandins } from "../nodes/standinBundle";
import { shq, standinBundleDir, standinScript, tsxBinary } from "../nodes/wrappers";
import { goSshAlgorithms } from "../provider/ssh";
import { LAB_DIR } from "./lab";
import { Summary, round, summarize } from "./stats";

/** The three costs, in seconds, and what a stand-in call adds to a bare session. */
export interface Calibration {
  node: string;
  ssh_true_s: Summary;
  /** The same session with the key exchanges and ciphers of pulumi-command's Go client (the command provider's). */
  ssh_true_go_client_s: Summary;
  ssh_kubeadm_version_bundle_s: Summary;
  ssh_kubeadm_version_tsx_s: Summary;
  /** Median with the stand-in minus median without: one bundled stand-in call. */
  standin_call_bundle_s: number;
  /** The same through tsx. */
  standin_call_tsx_s: number;
}

/** One session measured: its command line and any extra ssh client options. */
interface Session {
  command: string;
  clientOptions: string[];
}

/** The sessions measured, by name: `go` is `true` with the command provider's algorithms. */
export function calibrationSessions(node: string): Record<"true" | "go" | "bundle" | "tsx", Session> {
  const env = `env LAB_DIR=${shq(LAB_DIR)} LAB_NODE=${shq(node)}`;
  return {
    true: { command: "true", clientOptions: [] },
    go: { command: "true", clientOptions: goSshAlgorithms() },
    bundle: { command: `${env} ${shq(process.execPath)} ${shq(`${standinBundleDir(LAB_DIR)}/kubeadm.js`)} version -o short`, clientOptions: [] },
    tsx: { command: `${env} ${shq(tsxBinary())} ${shq(standinScript("kubeadm"))} version -o short`, clientOptions: [] },
  };
}

/** `samples` rounds of the four sessions on `node`. */
export async function calibrate(node: string, samples: number): Promise<Calibration> {
  buildStandins(LAB_DIR);
  const sessions = calibrationSessions(node);
  const times: Record<string, number[]> = { true: [], go: [], bundle: [], tsx: [] };
  for (let i = 0; i < samples; i++) {
    for (const [name, { command, clientOptions }] of Object.entries(sessions)) {
      const t0 = process.hrtime.bigint();
      const r = await runOnNode(node, command, undefined, { labDir: LAB_DIR, clientOptions });
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.code !== 0) throw new Error(`calibrate: ${command} on ${node}: exit ${r.code}: ${r.stderr}`);
      times[name]?.push(s);
    }
  }
  const t = summarize(times.true as number[], 3);
  const b = summarize(times.bundle as number[], 3);
  const x = summarize(times.tsx as number[], 3);
  return {
    node,
    ssh_true_s: t,
    ssh_true_go_client_s: summarize(times.go as number[], 3),
    ssh_kubeadm_version_bundle_s: b,
    ssh_kubeadm_version_tsx_s: x,
    standin_call_bundle_s: round(b.median - t.median, 3),
    standin_call_tsx_s: round(x.median - t.median, 3),
  };
}
