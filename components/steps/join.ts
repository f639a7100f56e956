/**
 * Step kind `join`, on every node but the first control-plane node: `kubeadm join --config` once, with
 * the join material its `join-token` step made (a worker: its join wave's `join-material`). Delete: `kubeadm reset` with the node's CRI endpoint.
 */
import { renderJoinConfiguration } from "../kubeadm/kubeadmConfig";
import { VALID_UNTIL_PREFIX, kubeadmOnceScripts, versionLine } from "../scripts/kubeadmRun";
import type { StepScripts } from "../scripts/types";
import type { Step, StepKind } from "./kind";
import { materialValidUntil, parseJoinMaterial } from "./joinToken";
import { stepId } from "./ids";

/**
 * `kubeadm join --config` (with `--control-plane` material inside the config for control-plane
 * nodes), once. The JoinConfiguration arrives on stdin because it carries the bootstrap token and the
 * certificate key; the file (0600) is removed once the join has succeeded. A new attempt with material
 * past its lifetime fails before kubeadm runs, naming `materialFrom` to replace. Retry and delete as
 * `initScripts`: `kubeadm reset -f --cri-socket <criSocket>` when this resource holds the last claim
 * (like real kubeadm, this does not delete the Node object; the join-token step's delete does).
 * @param i.criSocket the node's normalised CRI endpoint (declared, or detected by the prepare step).
 */
export function joinScripts(i: {
  node: string;
  criSocket: string;
  scope: string;
  owner: string;
  formerOwners?: string[];
  materialFrom: string;
}): StepScripts {
  return kubeadmOnceScripts({ ...i, action: "join", keepConfig: false });
}

/**
 * The join configuration on stdin: the line saying until when the material is valid, the line naming
 * the version the node joins at (`versionLine`: in stdin, not in the script, so an upgrade leaves the
 * join alone), then the YAML.
 */
export function joinStdin(validUntil: number | undefined, version: string, configuration: string): string {
  return `${validUntil !== undefined ? `${VALID_UNTIL_PREFIX}${validUntil}\n` : ""}${versionLine(version)}${configuration}`;
}

/** The step whose stdout is a join's material: its join wave's `join-material` (workers), else the node's `join-token`. */
function materialOf(step: Step, node: string): string {
  return step.material ?? stepId(node, "join-token");
}

/** `join`: the node joins the cluster, once. */
export const join: StepKind = {
  action: "join",
  shows: ["criSocket"],
  summary: ({ cluster, node }) => `kubeadm join${node.role === "control-plane" ? " --control-plane" : ""} ${cluster.version.text}, once`,
  scripts: ({ cluster, node, step, owner, formerOwners, resourceName }, endpoint) =>
    joinScripts({
      node: node.name,
      criSocket: endpoint,
      scope: step.id,
      owner,
      formerOwners,
      materialFrom: resourceName(materialOf(step, node.name)),
    }),
  scriptsUseEndpoint: true,
  stdin: {
    reads: ({ node, step }) => [materialOf(step, node.name)],
    secret: true,
    render: ({ cluster, node, step }, v) => {
      const stdout = v.stdout(materialOf(step, node.name));
      return joinStdin(materialValidUntil(stdout), cluster.version.text, renderJoinConfiguration(cluster, node, v.endpoint, parseJoinMaterial(stdout)));
    },
  },
  runsOnce: true,
};
