/**
 * What users write: the args of the `Cluster` component. Everything that decides the plan (names,
 * roles, versions, sockets, gates, labels, taints) is a plain value, checked when the component is
 * constructed, so at preview; an Output there is refused, saying why. What users often have as an
 * Output is one: the SSH fields (hosts, ports, users, keys), `controlPlaneEndpoint` (a load
 * balancer's DNS name), kubelet flag values (`node-ip`) and the install commands; those are checked
 * once known (deferred.ts).
 * Shaped for Pulumi's schema inference (the package's plugin serves other languages from these
 * interfaces): no unions other than `T | undefined` (roles and taint effects are enums of plain
 * strings), no `unknown`, no functions, and no type name ending in `Args` (generated SDKs add that
 * suffix to input types themselves).
 */
import type * as pulumi from "@pulumi/pulumi";
import type { Networking, NodeRole, Taint } from "../kubeadm/types";

/** A bastion the SSH connection goes through (pulumi-command's `connection.proxy`). */
export interface SshProxy {
  host: pulumi.Input<string>;
  /** Default 22. */
  port?: pulumi.Input<number>;
  /** Default: the node's user. */
  user?: pulumi.Input<string>;
  /** Default: the node's private key. Secret. */
  privateKey?: pulumi.Input<string>;
  /** The bastion's SSH host key, `ssh-ed25519 AAAA...` (authorized_keys form). Unset: not checked. */
  hostKey?: pulumi.Input<string>;
}

/** One machine of the cluster: a control-plane node or a worker. */
export interface ClusterNode {
  /** RFC 1123 DNS subdomain (`ip-10-0-1-23.ec2.internal`, lowercase); becomes the Kubernetes Node name (kubeadm nodeRegistration.name). */
  name: string;
  /** `control-plane` or `worker` (enum `NodeRole`). The first control-plane node in the list runs `kubeadm init`. */
  role: NodeRole;
  /** Address the SSH connection dials. */
  host: pulumi.Input<string>;
  /** SSH port. Default: `ssh.port`, else 22. */
  port?: pulumi.Input<number>;
  /** SSH user. Default: `ssh.user`, else `root`. A user other than root runs the scripts through `sudo -n`. */
  user?: pulumi.Input<string>;
  /** SSH private key (PEM/OpenSSH text). Default: `ssh.privateKey`. Secret. */
  privateKey?: pulumi.Input<string>;
  /** Pins the node's SSH host key (`ssh-ed25519 AAAA...`). Unset: NOT checked, and a warning says so. */
  hostKey?: pulumi.Input<string>;
  /** Reach the node through this bastion. */
  proxy?: SshProxy;
  /**
   * The node's CRI endpoint, e.g. `unix:///run/containerd/containerd.sock` (a bare absolute path gets
   * `unix://`, with kubeadm's deprecation warning). Unset: detected on the node exactly as kubeadm does.
   */
  criSocket?: string;
  /** kubelet flags, kubeadm v1beta4 `nodeRegistration.kubeletExtraArgs` (`--<name>=<value>`). */
  kubeletExtraArgs?: KubeletExtraArg[];
  /** Node labels, set with kubectl after the node joined. */
  labels?: Record<string, string>;
  /** Node taints (kubeadm `nodeRegistration.taints`). Unset on a control-plane node: kubeadm's default taint. */
  taints?: Taint[];
  /**
   * The node's machine is gone (a worker only; default false). Its Node object is deleted from the first
   * control-plane node and nothing runs on the machine; the node's steps stay in the state as they are,
   * retained on delete, so removing the entry afterwards runs nothing either (kubeadm's removal, drain
   * then `kubeadm reset` on the machine, needs the machine). Refused on a control-plane node (its etcd
   * member must be removed by hand).
   */
  gone?: boolean;
  /** This node's kubeadm install command for upgrades; default: the cluster's `kubeadmInstallCommand`. */
  kubeadmInstallCommand?: pulumi.Input<string>;
  /** This node's kubelet and kubectl install command for upgrades; default: the cluster's `kubeletInstallCommand`. */
  kubeletInstallCommand?: pulumi.Input<string>;
  /** Deprecated: as the cluster's `installCommand`, for this node. */
  installCommand?: pulumi.Input<string>;
}

/**
 * One kubelet flag, a kubeadm v1beta4 `nodeRegistration.kubeletExtraArgs` entry: `--<name>=<value>`.
 * The name decides the plan and is plain; the value may be an Output (`node-ip` from the machine's
 * resource), checked once known: no whitespace or control characters.
 */
export interface KubeletExtraArg {
  /** The flag's name without dashes, `node-ip`. Not `container-runtime-endpoint` (set criSocket). */
  name: string;
  value: pulumi.Input<string>;
}

/** SSH settings applied to every node that does not set its own. */
export interface SshDefaults {
  /** Default `root`. */
  user?: pulumi.Input<string>;
  /** Secret. */
  privateKey?: pulumi.Input<string>;
  /** Default 22. */
  port?: pulumi.Input<number>;
}

/** The args of `new Cluster(name, args, opts)`. */
export interface ClusterArgs {
  /** Exact Kubernetes/kubeadm version, `v1.34.2` or `1.34.2`; minors 1.31 to 1.37. */
  kubernetesVersion: string;
  /** The machines; at least one control-plane node. */
  nodes: ClusterNode[];
  /**
   * kubeadm controlPlaneEndpoint (`host` or `host:port`), e.g. a load balancer's DNS name; required with
   * more than one control-plane node. May be an Output: checked once known.
   */
  controlPlaneEndpoint?: pulumi.Input<string>;
  /** kubeadm ClusterConfiguration.networking. */
  networking?: Networking;
  /**
   * kubeadm's own featureGates map, e.g. `{ NodeLocalCRISocket: true }`: only gates kubeadm of this
   * minor knows (kubelet gates go in `kubeletConfiguration.featureGates`).
   */
  featureGates?: Record<string, boolean>;
  /**
   * Extra KubeletConfiguration fields for every node (not `containerRuntimeEndpoint`: that is per node),
   * any JSON values (`{ maxPods: 200, featureGates: { ... } }`); checked to be plain data.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any JSON value; the schema's Any.
  kubeletConfiguration?: Record<string, any>;
  /** SSH defaults for every node. */
  ssh?: SshDefaults;
  /** Workers joining at the same time, at most. Default 10. */
  maxConcurrentJoins?: number;
  /** Seconds the kubelet must stay active after a restart to count as healthy. Default 10. */
  kubeletSettleSeconds?: number;
  /** Lifetime of each join's bootstrap token, kubeadm duration text. Default `2h0m0s`. */
  joinTokenTtl?: string;
  /** kubectl drain timeout (upgrades, node removal), seconds. Default 300. */
  drainTimeoutSeconds?: number;
  /** kubectl drain --grace-period, seconds. Default: each pod's own. */
  drainGracePeriodSeconds?: number;
  /** Workers per rollout batch: drained together (one session), upgraded or migrated, then uncordoned together; one batch cordoned at a time. Default 1. */
  maxUnavailableWorkers?: number;
  /**
   * The kubeadm install command of an upgrade, bash, run on each node right before its `kubeadm upgrade
   * apply|node` (kubeadm's documented order): `{version}` becomes `1.34.2`, `{minor}` `1.34`. Default:
   * the pkgs.k8s.io kubeadm package for Debian/Ubuntu (`DEFAULT_KUBEADM_INSTALL_COMMAND`); `""`: none
   * (kubeadm is already at the target). A node's own wins.
   */
  kubeadmInstallCommand?: pulumi.Input<string>;
  /**
   * The kubelet and kubectl install command of an upgrade, bash, run on each node after its `kubeadm
   * upgrade` and its drain, before the kubelet restart: placeholders as `kubeadmInstallCommand`. Default:
   * the pkgs.k8s.io kubelet and kubectl packages for Debian/Ubuntu (`DEFAULT_KUBELET_INSTALL_COMMAND`);
   * `""`: none. A node's own wins.
   */
  kubeletInstallCommand?: pulumi.Input<string>;
  /**
   * Deprecated: the single install command of earlier versions (kubeadm, kubelet and kubectl at once,
   * before `kubeadm upgrade`): read as `kubeadmInstallCommand`, and unless `kubeletInstallCommand` is
   * set there is then no kubelet install step.
   */
  installCommand?: pulumi.Input<string>;
  /**
   * Whether to build `provider`, a `@pulumi/kubernetes` Provider for the new cluster. Default true.
   * Set false where the kubernetes resource plugin is not installed (it is loaded as soon as the
   * Provider is registered, at preview) or where the program makes its own Provider from `kubeconfig`.
   */
  kubernetesProvider?: boolean;
}

/** Deprecated name of {@link ClusterNode}. */
export type NodeArgs = ClusterNode;
/** Deprecated name of {@link SshProxy}. */
export type ProxyArgs = SshProxy;
