/**
 * The floor: the shortest sequence an operator following kubeadm's documentation would type over SSH,
 * run on the same lab with the same stand-in durations, timed beside the component. One SSH session
 * per node and step, as an operator's `ssh node '...'` is; no checks beyond the exit codes.
 *
 * - provision: `kubeadm init --upload-certs` on the first control-plane node (then admin.conf copied
 *   to ~/.kube/config, as the docs say), its printed join command and certificate key reused; the
 *   other control-plane nodes `kubeadm join --control-plane` one after another; then every worker's
 *   `kubeadm join` at the same time.
 * - upgrade: the first control-plane node drained (kubectl there), then on it the kubeadm package,
 *   `kubeadm upgrade apply -y`, the kubelet package and a kubelet restart, then its uncordon; each other
 *   control-plane node in turn the same with `kubeadm upgrade node` (kubeadm's upgrade guide drains and
 *   uncordons control-plane nodes too, around their kubelet); then per batch of `maxUnavailable` workers:
 *   their drains (kubectl on the first control-plane node, one session, side by side), on each worker at
 *   once the same as on a control-plane node, then their uncordons (one session). Each node's drain comes
 *   before its `kubeadm upgrade` rather than after it (kubeadm's guide): one session per node fewer. The packages are the lab's install commands
 *   (the ones the bench stack gives the component).
 */
import { runOnNode } from "../nodes";
import { LAB_INSTALLS } from "../e2e/helpers";
import { BenchCluster, CONTAINERD, LAB_DIR, addressOf, controlPlaneNames, countingSessions, nodeNames, workerNames } from "./lab";

/** What `kubeadm init` printed that the joins need. */
export interface JoinMaterial {
  token: string;
  caCertHash: string;
  certificateKey: string;
}

/**
 * The token, CA hash and certificate key from `kubeadm init --upload-certs` output.
 * @throws Error when one is missing.
 */
export function parseInitOutput(out: string): JoinMaterial {
  const token = /--token (\S+)/.exec(out)?.[1];
  const caCertHash = /--discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})/.exec(out)?.[1];
  const certificateKey = /--certificate-key ([0-9a-f]{64})/.exec(out)?.[1];
  if (!token || !caCertHash || !certificateKey) {
    // The output stays out of the message: it holds the join material.
    const missing = Object.entries({ "--token": token, "--discovery-token-ca-cert-hash": caCertHash, "--certificate-key": certificateKey }).filter(([, v]) => !v).map(([k]) => k);
    throw new Error(`floor: kubeadm init printed no join command with ${missing.join(", ")} (its ${out.split("\n").length} lines of output not shown)`);
  }
  return { token, caCertHash, certificateKey };
}

/**
 * The list cut into consecutive batches of `size`.
 * @throws Error when size is not a positive integer.
 */
export function batches<T>(xs: T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new Error(`batch size ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** Bash running the commands side by side and failing when any of them failed. */
export function sideBySide(commands: string[]): string {
  return `pids=(); ${commands.map((c) => `{ ${c}; } & pids+=($!);`).join(" ")} rc=0; for p in "\${pids[@]}"; do wait "$p" || rc=1; done; exit $rc`;
}

/** The operator's per-node upgrade: the kubeadm package, kubeadm, the kubelet package, the kubelet's restart. */
export function upgradeNodeCommand(target: string, kubeadm: string): string {
  const install = (key: string) => `{ ${(LAB_INSTALLS[key] as string).split("{version}").join(target.replace(/^v/, ""))}; }`;
  return `${install("kubeadm:kubeadmInstallCommand")} && ${kubeadm} && ${install("kubeadm:kubeletInstallCommand")} && systemctl daemon-reload && systemctl restart kubelet`;
}

/** One timed operator sequence. */
export interface FloorRun {
  wall_s: number;
  /** Per node, SSH connections its sshd accepted. */
  sessions: Record<string, number>;
}

/** The command with the join material's values (token, CA hash, certificate key) blanked, for an error message. */
export function redacted(command: string): string {
  return command.replace(/(--token|--discovery-token-ca-cert-hash|--certificate-key) \S+/g, "$1 [redacted]");
}

async function ssh(node: string, command: string): Promise<string> {
  const r = await runOnNode(node, command, undefined, { labDir: LAB_DIR, timeoutMs: 900_000 });
  if (r.code !== 0) throw new Error(`floor: on ${node}: ${redacted(command)}: exit ${r.code}: ${r.stderr.trim()}`);
  return r.stdout;
}

async function timed(c: BenchCluster, f: () => Promise<void>): Promise<FloorRun> {
  const { value, sessions } = await countingSessions(nodeNames(c), async () => {
    const t0 = process.hrtime.bigint();
    await f();
    return Number(process.hrtime.bigint() - t0) / 1e9;
  });
  return { wall_s: value, sessions };
}

/** The operator's `kubeadm init` on the first control-plane node, then admin.conf copied as kubeadm's docs say. */
export function initCommand(endpoint: string, version: string, node: string): string {
  return (
    `kubeadm init --control-plane-endpoint ${endpoint} --upload-certs --kubernetes-version ${version} --cri-socket ${CONTAINERD} --node-name ${node}` +
    " && mkdir -p $HOME/.kube && cp /etc/kubernetes/admin.conf $HOME/.kube/config"
  );
}

/** The operator's `kubeadm join` of `node` with the material `kubeadm init` printed (a control-plane node's with its certificate key). */
export function joinCommand(m: JoinMaterial, endpoint: string, node: string, controlPlane: boolean): string {
  const base = `kubeadm join ${endpoint} --token ${m.token} --discovery-token-ca-cert-hash ${m.caCertHash} --cri-socket ${CONTAINERD} --node-name ${node}`;
  return controlPlane ? `${base} --control-plane --certificate-key ${m.certificateKey}` : base;
}

/** Provisions a fresh cluster at `version` the operator's way (see the module comment). */
export function provisionFloor(c: BenchCluster, version: string): Promise<FloorRun> {
  const endpoint = `${addressOf(0)}:6443`;
  const [first, ...otherCps] = controlPlaneNames(c) as [string, ...string[]];
  return timed(c, async () => {
    const m = parseInitOutput(await ssh(first, initCommand(endpoint, version, first)));
    for (const cp of otherCps) await ssh(cp, joinCommand(m, endpoint, cp, true));
    await Promise.all(workerNames(c).map((w) => ssh(w, joinCommand(m, endpoint, w, false))));
  });
}

/** Upgrades the cluster to `target` the operator's way, `maxUnavailable` workers at a time. */
export function upgradeFloor(c: BenchCluster, target: string, maxUnavailable: number): Promise<FloorRun> {
  const [first, ...otherCps] = controlPlaneNames(c) as [string, ...string[]];
  return timed(c, async () => {
    // Drained, upgraded (kubeadm and kubelet in one session), uncordoned: a batch of nodes at a time.
    const roll = async (batch: string[], kubeadm: string) => {
      await ssh(first, sideBySide(batch.map((n) => `kubectl drain ${n} --ignore-daemonsets --delete-emptydir-data`)));
      await Promise.all(batch.map((n) => ssh(n, upgradeNodeCommand(target, kubeadm))));
      await ssh(first, sideBySide(batch.map((n) => `kubectl uncordon ${n}`)));
    };
    await roll([first], `kubeadm upgrade apply -y ${target}`);
    for (const cp of otherCps) await roll([cp], "kubeadm upgrade node");
    for (const batch of batches(workerNames(c), maxUnavailable)) await roll(batch, "kubeadm upgrade node");
  });
}
