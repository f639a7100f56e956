/**
 * Step kind `join`, on every node but the first control-plane node: `kubeadm join --config` once, with
 * the join material its `join-token` step made. Delete: `kubeadm reset` with the node's CRI endpoint.
 */
import { renderJoinConfiguration } from "../kubeadm/kubeadmConfig";
import { kubeadmOnceScripts } from "../scripts/kubeadmRun";
import type { StepScripts } from "../scripts/types";
import type { StepKind } from "./kind";
import { parseJoinMaterial } from "./joinToken";
import { stepId } from "./ids";

/**
 * `kubeadm join --config` (with `--control-plane` material inside the config for control-plane
 * nodes), once. The JoinConfiguration arrives on stdin because it carries the bootstrap token and the
 * certificate key; the file (0600) is removed once the join has succeeded. Retry and delete as
 * `initScripts`: `kubeadm reset -f --cri-socket <criSocket>` (like real kubeadm, this does not
 * delete the Node object; the node-metadata step does).
 * @param criSocket the node's normalised CRI endpoint (declared, or detected by the prepare step).
 */
export function joinScripts(node: string, criSocket: string): StepScripts {
  return kubeadmOnceScripts(node, "join", false, criSocket);
}

/** `join`: the node joins the cluster, once. */
export const join: StepKind = {
  action: "join",
  summary: ({ cluster, node }) => `kubeadm join${node.role === "control-plane" ? " --control-plane" : ""} ${cluster.version.text}, once`,
  scripts: ({ node }, endpoint) => joinScripts(node.name, endpoint),
  scriptsUseEndpoint: true,
  stdin: {
    reads: ({ node }) => [stepId(node.name, "join-token")],
    secret: true,
    render: ({ cluster, node }, v) =>
      renderJoinConfiguration(cluster, node, v.endpoint, parseJoinMaterial(v.stdout(stepId(node.name, "join-token")))),
  },
  runsOnce: true,
};
