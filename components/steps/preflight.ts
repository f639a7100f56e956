/**
 * Step kind `preflight`, on the first control-plane node after every node's `prepare` and before any
 * step that changes something: kubeadm's version rules checked against what the nodes and the cluster
 * report at run time (not against the stack): the cluster's version to the target is one kubeadm
 * upgrades (one minor at a time, no downgrade), and every node's installed kubelet is within the
 * version skew policy (never newer than the API server, at most three minors older than the target).
 * The verdict is computed from the `prepare` outputs; the step fails with it, naming the node, so
 * nothing after it runs.
 */
import { renderScript } from "../scripts/script";
import type { StepScripts } from "../scripts/types";
import type { ValidCluster } from "../kubeadm/types";
import type { StepKind } from "./kind";
import { stepId } from "./ids";

interface Version {
  minor: number;
  patch: number;
  text: string;
}

function version(text: string | undefined): Version | undefined {
  const m = /^v?1\.(\d+)\.(\d+)/.exec(text ?? "");
  return m ? { minor: Number(m[1]), patch: Number(m[2]), text: `v1.${m[1]}.${m[2]}` } : undefined;
}

function field(stdout: string, name: string): string | undefined {
  const m = new RegExp(`^${name}=(.*)$`, "m").exec(stdout);
  return m && m[1]!.trim() !== "" ? m[1]!.trim() : undefined;
}

/**
 * The problems kubeadm's rules find in what the nodes reported (`prepare` stdout by node name); empty
 * when the plan may run. Never throws.
 * - `clusterVersion` (the first control-plane node, an existing cluster) to the target: no downgrade,
 *   one minor at a time;
 * - each node's `kubeletVersion`: a node already in the cluster (`member=yes`) not newer than the API
 *   server now (the cluster's version); a node still to join (it joins once the control plane is at the
 *   target) not newer than the target; none more than three minors older than the target.
 */
export function versionProblems(cluster: ValidCluster, reported: Record<string, string>): string[] {
  const target = cluster.version;
  const problems: string[] = [];
  const first = cluster.controlPlane[0]?.name ?? "";
  const now = version(field(reported[first] ?? "", "clusterVersion"));
  if (now !== undefined) {
    if (now.minor > target.minor || (now.minor === target.minor && now.patch > target.patch)) {
      problems.push(`the cluster runs ${now.text}: kubeadm cannot downgrade it to ${target.text}`);
    } else if (target.minor > now.minor + 1) {
      problems.push(`the cluster runs ${now.text}: kubeadm upgrades one minor version at a time (next: v1.${now.minor + 1}.x), not to ${target.text}`);
    }
  }
  for (const node of cluster.nodes) {
    const out = reported[node.name] ?? "";
    const kubelet = version(field(out, "kubeletVersion"));
    if (kubelet === undefined) continue;
    const member = field(out, "member") === "yes";
    if (member && now !== undefined && kubelet.minor > now.minor) {
      problems.push(`node "${node.name}": its kubelet ${kubelet.text} is newer than the API server (${now.text}); the kubelet may never be newer than kube-apiserver`);
    } else if (kubelet.minor > target.minor) {
      problems.push(`node "${node.name}": its kubelet ${kubelet.text} is newer than the API server will be (${target.text}); the kubelet may never be newer than kube-apiserver`);
    } else if (kubelet.minor < target.minor - 3) {
      problems.push(`node "${node.name}": its kubelet ${kubelet.text} is more than three minor versions older than ${target.text}; upgrade it first`);
    }
  }
  return problems;
}

/** The preflight script: stdin is `ok` or the problems, one a line; it fails naming them. */
export function preflightScripts(node: string): StepScripts {
  const create = renderScript(node, [
    `problems=$(cat)`,
    `if [ "$problems" = ok ]; then echo "versions within kubeadm's rules"; exit 0; fi`,
    `pk_fail "refused before anything changed: $problems"`,
  ]);
  return { create, update: create };
}

/** `preflight`: kubeadm's version and skew rules against what the nodes reported. */
export const preflight: StepKind = {
  action: "preflight",
  summary: ({ cluster }) =>
    `check what every node reported against kubeadm's rules for ${cluster.version.text} (the cluster's version, one minor at a time; each kubelet not newer than the API server, at most three minors older); refuse before anything changes`,
  scripts: ({ node }) => preflightScripts(node.name),
  stdin: {
    reads: ({ cluster }) => cluster.nodes.map((n) => stepId(n.name, "prepare")),
    render: ({ cluster }, v) => {
      const problems = versionProblems(cluster, Object.fromEntries(cluster.nodes.map((n) => [n.name, v.stdout(stepId(n.name, "prepare"))])));
      return problems.length === 0 ? "ok\n" : `${problems.join("; ")}\n`;
    },
  },
};
