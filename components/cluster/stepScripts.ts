/**
 * Which node script each plan step runs, with the args that shape it.
 */
import type { ValidCluster, ValidNode } from "../kubeadm/types";
import { CRI_SOCKET_PROBE_ORDER, multipleCriEndpointsMessage } from "../kubeadm/criSocket";
import type { Step } from "../plan/steps";
import type { StepScripts } from "../scripts/types";
import { prepareScripts } from "../scripts/prepare";
import { initScripts, joinScripts } from "../scripts/kubeadmRun";
import { joinTokenScripts, kubeconfigScripts } from "../scripts/joinToken";
import { kubeletFilesScripts } from "../scripts/kubeletFiles";
import { nodeMetadataScripts } from "../scripts/nodeMetadata";
import { clusterConfigReadScripts, clusterConfigScripts } from "../scripts/clusterConfig";
import { drainScripts, upgradeScripts } from "../scripts/upgrade";
import { DEFAULT_INSTALL_COMMAND, renderInstallCommand } from "../scripts/install";
import type { ClusterArgs } from "./args";

const LIST = "\u0000list\u0000";

/** kubeadm's several-sockets message split around its list, for the prepare script to fill in. */
function multipleMessage(): { before: string; after: string } {
  const [before = "", after = ""] = multipleCriEndpointsMessage([LIST]).split(LIST);
  return { before, after };
}

/**
 * The scripts of `step`.
 * @param criSocket the node's normalised CRI endpoint: `init` and `join` pass it to `kubeadm reset`
 *   (their delete and their retry cleanup); other steps ignore it.
 */
export function stepScripts(step: Step, cluster: ValidCluster, args: ClusterArgs, criSocket: string): StepScripts {
  const node = cluster.nodes.find((n) => n.name === step.node) as ValidNode;
  switch (step.action) {
    case "prepare":
      return prepareScripts({
        node: node.name,
        criSocket: node.criSocket,
        probeOrder: CRI_SOCKET_PROBE_ORDER,
        multipleMessage: multipleMessage(),
        nodeLocalCriSocket: cluster.nodeLocalCriSocket,
      });
    case "init":
      return initScripts(node.name, criSocket);
    case "kubeconfig":
      return kubeconfigScripts(node.name);
    case "join-token":
      return joinTokenScripts(node.name, node.role === "control-plane", args.joinTokenTtl ?? "2h0m0s");
    case "join":
      return joinScripts(node.name, criSocket);
    case "kubelet-files":
      return kubeletFilesScripts(node.name, args.kubeletSettleSeconds ?? 10, cluster.nodeLocalCriSocket);
    case "node-metadata":
      return nodeMetadataScripts({
        node: node.name,
        labels: node.labels,
        nodeLocalCriSocket: cluster.nodeLocalCriSocket,
        uncordon: node.role === "worker",
        version: cluster.version.text,
        drainTimeoutSeconds: args.drainTimeoutSeconds ?? 300,
        drainGracePeriodSeconds: args.drainGracePeriodSeconds,
      });
    case "cluster-config-read":
      return clusterConfigReadScripts(node.name, `${cluster.version.text} NodeLocalCRISocket=${cluster.kubeadmFeatureGates.NodeLocalCRISocket ?? "default"}`);
    case "cluster-config":
      return clusterConfigScripts(node.name);
    case "drain":
      return drainScripts({
        node: node.name,
        version: cluster.version.text,
        timeoutSeconds: args.drainTimeoutSeconds ?? 300,
        gracePeriodSeconds: args.drainGracePeriodSeconds,
      });
    case "upgrade": {
      const template = args.nodes.find((n) => n.name === node.name)?.installCommand ?? args.installCommand ?? DEFAULT_INSTALL_COMMAND;
      return upgradeScripts({
        node: node.name,
        version: cluster.version.text,
        apply: node.name === cluster.controlPlane[0]?.name,
        install: template === "" ? undefined : renderInstallCommand(template, cluster.version),
        settleSeconds: args.kubeletSettleSeconds ?? 10,
        gate: cluster.nodeLocalCriSocket ? "node-local" : "legacy",
        nodeLocalCriSocket: cluster.nodeLocalCriSocket,
      });
    }
  }
}
