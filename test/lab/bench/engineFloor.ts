/**
 * The floor through the engine: the operator's provisioning sequence (floor.ts `provisionFloor`: the same
 * kubeadm calls, one SSH session per node and step) written as the smallest Pulumi program that runs it,
 * one `command:remote:Command` per session, and timed as the component is (`pulumi up` on the real
 * engine with the lab's command provider). No checks, no steps kept for later rollouts, no preflight:
 * what any Pulumi program running these kubeadm calls over SSH pays at least. The component's wall time
 * over this one's is what the component itself adds; this one's over the floor's is what the engine adds.
 *
 * Commands: `<cp-1>-init` (`kubeadm init --upload-certs`, its stdout secret: it prints the join command
 * and certificate key), then each other control-plane node's `-join` after the one before, then every
 * worker's `-join` after the last control-plane node, side by side, as many at once as the engine's
 * `--parallel` lets it (the CLI's default is 4 per CPU: 8 on 2 cores, where the floor starts all 20).
 * Each join reads the join material on its stdin.
 */
import * as pulumi from "@pulumi/pulumi";
import type { PulumiFn } from "@pulumi/pulumi/automation";
import { RemoteCommand } from "../../../components/cluster/remoteCommand";
import { addressOf, type BenchCluster, controlPlaneNames, workerNames } from "./lab";
import { initCommand, joinCommand, parseInitOutput } from "./floor";

/** A node of the bench stack's `kubeadm:nodes`, as the lab writes it (host key injected). */
interface StackNode {
  name: string;
  host: string;
  hostKey?: string;
}

/**
 * The program: reads the bench stack's `kubeadm:nodes` (names, hosts, the host keys the lab injects) and
 * `kubeadm:sshPrivateKey` (secret), and registers the floor's Commands (see the module comment).
 * @throws Error when a node of `c` is missing from the stack's nodes.
 */
export function engineFloorProgram(c: BenchCluster, version: string): PulumiFn {
  return async () => {
    const config = new pulumi.Config("kubeadm");
    const nodes = config.requireObject<StackNode[]>("nodes");
    const privateKey = config.requireSecret("sshPrivateKey");
    const endpoint = `${addressOf(0)}:6443`;
    const connection = (name: string) => {
      const n = nodes.find((x) => x.name === name);
      if (n === undefined) throw new Error(`engine floor: node ${name} is not in the stack's kubeadm:nodes`);
      return { host: n.host, user: "root", privateKey, ...(n.hostKey !== undefined ? { hostKey: n.hostKey } : {}) };
    };
    const [first, ...otherCps] = controlPlaneNames(c) as [string, ...string[]];
    const init = new RemoteCommand(`floor-${first}-init`, { connection: connection(first), create: initCommand(endpoint, version, first), logging: "none" }, { additionalSecretOutputs: ["stdout"] });
    // The join material on stdin (secret, as init's stdout is), read into the variables the join names:
    // kubeadm gets the floor's arguments, and no command text holds the token or the certificate key.
    const stdin = init.stdout.apply(parseInitOutput).apply((m) => `${m.token} ${m.caCertHash} ${m.certificateKey}\n`);
    const fromStdin = { token: '"$token"', caCertHash: '"$hash"', certificateKey: '"$key"' };
    const join = (node: string, controlPlane: boolean, after: RemoteCommand) =>
      new RemoteCommand(`floor-${node}-join`, { connection: connection(node), create: `read -r token hash key && ${joinCommand(fromStdin, endpoint, node, controlPlane)}`, stdin }, { dependsOn: [after] });
    let last: RemoteCommand = init;
    for (const cp of otherCps) last = join(cp, true, last);
    for (const w of workerNames(c)) join(w, false, last);
  };
}
