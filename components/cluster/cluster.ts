/**
 * Layer 4, the component: validate, plan, then one `command.remote.Command` per plan step.
 */
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import { validateCluster } from "../kubeadm/validate";
import { DEFAULT_CRI_SOCKET } from "../kubeadm/criSocket";
import type { ClusterSpec, ValidCluster, ValidNode } from "../kubeadm/types";
import { buildPlan, lineAfter, lineNodes, type LineWait, type Step } from "../plan/steps";
import { NODE_LOCAL_CRI_SOCKET } from "../kubeadm/gates";
import type { StepScripts } from "../scripts/types";
import { DEFAULT_KUBEADM_INSTALL_COMMAND, DEFAULT_KUBELET_INSTALL_COMMAND } from "../scripts/install";
import type { RunValues, StepContext, StepSettings } from "../steps/kind";
import { stepValues } from "../steps/values";
import { stdinWithValues } from "../scripts/script";
import { stepCommand, valueCommand } from "./command";
import { nodeConnection, secretOrUndefined } from "./connection";
import type { RemoteCommand } from "./remoteCommand";
import { records } from "./records";
import { checkInitNode, planTransitions, type Transitions } from "./transitions";
import { describeChanges } from "./changes";
import { deferredArgs } from "./deferred";
import { asInputErrors } from "./inputErrors";
import { combine } from "./combine";
import type { ClusterArgs, NodeArgs } from "./args";

/** Per-node status, an output of the component. */
export interface NodeStatus {
  name: string;
  role: string;
  /** The node's CRI endpoint: declared, or as detected on the node (unknown in a first preview). */
  criSocket: string;
  /** Whether the node keeps its CRI socket node-local (instance-config.yaml) rather than flag + annotation. */
  nodeLocalCriSocket: boolean;
}

/** Whether a value is plain data (not an Output, a Promise or a Resource) that can be checked now. */
function plainOrUndefined(value: unknown): unknown {
  return pulumi.Output.isInstance(value) || value instanceof Promise ? undefined : value;
}

/**
 * The plain part of the args for `validateCluster`: the args as given (stack config is arbitrary JSON,
 * so entries may be null or of the wrong type: validation names them), with Outputs left to run time.
 */
function clusterSpec(args: ClusterArgs): ClusterSpec {
  const nodes: unknown[] = Array.isArray(args.nodes) ? args.nodes : [];
  return {
    kubernetesVersion: args.kubernetesVersion,
    nodes: nodes.map((entry) => {
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return entry;
      const n = entry as NodeArgs;
      return {
        name: n.name,
        role: n.role,
        criSocket: n.criSocket,
        kubeletExtraArgs: n.kubeletExtraArgs,
        labels: n.labels,
        taints: n.taints,
        host: plainOrUndefined(n.host),
        hostGiven: n.host !== undefined && n.host !== null,
        gone: n.gone,
        port: n.port ?? args.ssh?.port ?? 22,
        user: plainOrUndefined(n.user ?? args.ssh?.user),
        ...("hostKey" in n ? { hostKey: plainOrUndefined(n.hostKey) } : {}),
        ...("proxy" in n ? { proxy: n.proxy } : {}),
        kubeadmInstallCommand: n.kubeadmInstallCommand ?? n.installCommand,
        kubeletInstallCommand: n.kubeletInstallCommand,
      };
    }),
    controlPlaneEndpoint: args.controlPlaneEndpoint as string | undefined, // plain: placeholder or value (deferred.ts)
    networking: args.networking,
    featureGates: args.featureGates,
    kubeletConfiguration: args.kubeletConfiguration,
    drainTimeoutSeconds: args.drainTimeoutSeconds,
    drainGracePeriodSeconds: args.drainGracePeriodSeconds,
    maxConcurrentJoins: args.maxConcurrentJoins,
    maxUnavailableWorkers: args.maxUnavailableWorkers,
    kubeletSettleSeconds: args.kubeletSettleSeconds,
    joinTokenTtl: args.joinTokenTtl,
    kubeadmInstallCommand: args.kubeadmInstallCommand ?? args.installCommand,
    kubeletInstallCommand: args.kubeletInstallCommand,
  };
}

/**
 * The settings step kinds read, defaults applied (validated with the rest of the args). `args` holds no
 * Output in the fields read here: placeholders or values (deferred.ts).
 */
function stepSettings(args: ClusterArgs): StepSettings {
  return {
    joinTokenTtl: args.joinTokenTtl ?? "2h0m0s",
    kubeletSettleSeconds: args.kubeletSettleSeconds ?? 10,
    drainTimeoutSeconds: args.drainTimeoutSeconds ?? 300,
    drainGracePeriodSeconds: args.drainGracePeriodSeconds,
    maxUnavailableWorkers: args.maxUnavailableWorkers ?? 1,
    kubeadmInstall: (node) => {
      const n = args.nodes.find((x) => x.name === node);
      const template = n?.kubeadmInstallCommand ?? n?.installCommand ?? args.kubeadmInstallCommand ?? args.installCommand ?? DEFAULT_KUBEADM_INSTALL_COMMAND;
      return template === "" ? undefined : (template as string);
    },
    kubeletInstall: (node) => {
      const n = args.nodes.find((x) => x.name === node);
      // The deprecated single installCommand installed everything before kubeadm upgrade: with it and no
      // kubeletInstallCommand there is no second install step.
      const legacy = (n?.installCommand ?? args.installCommand) !== undefined;
      const template = n?.kubeletInstallCommand ?? args.kubeletInstallCommand ?? (legacy ? "" : DEFAULT_KUBELET_INSTALL_COMMAND);
      return template === "" ? undefined : (template as string);
    },
  };
}

/**
 * Stop the deployment of a refused plan before the engine deletes anything, after saying why (an error
 * diagnostic on the Cluster). A program that only logs an error still ends normally for the engine, which
 * then deletes every resource the program did not register: here every step, so every node would be
 * drained and reset. The engine stops a deployment whose program registers one resource name twice,
 * before any delete: this registers `<cluster>-plan-refused` twice (two Commands that run nothing), and
 * the preview or `up` fails with "Duplicate resource URN" after the refusal's own error. The second
 * reaches the engine only once the engine has taken the error (its value waits for the log call): the
 * engine stops at the duplicate at once, and an error still on its way was lost (seen on a busy machine:
 * the preview failed with the duplicate alone). Both are registered now, so the program cannot end
 * normally in between.
 */
function refuse(parent: pulumi.ComponentResource, name: string, message: string, connection: ReturnType<typeof nodeConnection>): void {
  const delivered = pulumi.log.error(message, parent).then(() => message, () => message);
  valueCommand(parent, `${name}-plan-refused`, message, connection, false);
  valueCommand(parent, `${name}-plan-refused`, delivered, connection, false);
}

/** What `registerSteps` needs besides the plan. */
interface StepSources {
  context(id: string): StepContext;
  /** The scripts rendered at construction (with the declared endpoint). */
  early(id: string): StepScripts;
  /**
   * With args given as Outputs (deferred.ts): each step's context once their values are known, from
   * which its scripts and stdin are rendered (the construction's context holds placeholders). One Output
   * for every step, whose value is a lookup: a context as an Output's value would be walked (and copied
   * by pulumi.all) with the whole cluster in it, for every step.
   */
  late?: pulumi.Output<(id: string) => StepContext>;
  connection(node: string): ReturnType<typeof nodeConnection>;
  /** The Cluster's `retainOnDelete`, passed on to every step. */
  retainOnDelete: boolean;
}

/**
 * What the registered steps give back: a step's stdout, a node's resolved CRI endpoint, every step's
 * resource. Functions only: this is an Output's value, which the SDK walks (`containsUnknowns`) for each
 * Output made from it, into arrays and objects but not into functions.
 */
interface RegisteredSteps {
  stdout(id: string): pulumi.Output<string>;
  /** Known now when declared. */
  endpoint(node: string): string | pulumi.Output<string>;
  all(): RemoteCommand[];
}

/**
 * The run-time values of a step's stdin: the node's endpoint, the stdout of the steps it reads and the
 * endpoints of the nodes it names (`endpointsOf`, a join wave's members), given as they came: `values`
 * holds the stdout of each of `reads`, then the endpoint of each of `endpointNodes`.
 */
function runValues(stepId: string, endpoint: string, reads: string[], endpointNodes: string[], values: string[]): RunValues {
  return {
    endpoint,
    stdout: (id) => {
      const i = reads.indexOf(id);
      if (i < 0) throw new Error(`${stepId}: reads ${id}, which its kind does not name in stdin.reads`);
      return values[i] as string;
    },
    endpointOf: (node) => {
      const i = endpointNodes.indexOf(node);
      if (i < 0) throw new Error(`${stepId}: reads the endpoint of ${node}, which its kind does not name in stdin.endpointsOf`);
      return values[reads.length + i] as string;
    },
  };
}

/**
 * One `command.remote.Command` per plan step, in plan order. The component only loops over the plan:
 * what a step reads, runs and deletes is its kind's (components/steps). A value known now (a declared
 * endpoint, a script, a stdin made of known values) is given to the Command as it is, not as an Output
 * (`combine`): the same inputs, resources and secrecy, with fewer Outputs.
 */
function registerSteps(parent: pulumi.ComponentResource, name: string, steps: Step[], src: StepSources, former: string[]): RegisteredSteps {
  const commands = new Map<string, RemoteCommand>();
  /** Each node's endpoint: declared (known now), or as its prepare step reports it. */
  const endpoints = new Map<string, string | pulumi.Output<string>>();
  /** Whether each node had joined before this run, as its prepare step reported. */
  const joined = new Map<string, pulumi.Output<boolean>>();
  /**
   * Whether each node a line names had joined before this run, as one value shared by every step whose
   * line names the same nodes (a batch's upgrades and the next batch's drain): one `pulumi.all` per set,
   * not per step. The Map is made inside it: `pulumi.all` would unwrap a Map among its values into an
   * empty object.
   */
  const reports = new Map<string, Map<string, boolean> | pulumi.Output<Map<string, boolean>>>();
  const joinedReports = (line: LineWait): Map<string, boolean> | pulumi.Output<Map<string, boolean>> => {
    const nodes = lineNodes(line);
    const key = nodes.join(" ");
    const known = reports.get(key);
    if (known !== undefined) return known;
    const made = combine(nodes.map((n) => joined.get(n) ?? true), (flags) => new Map(nodes.map((n, i) => [n, flags[i] as boolean])));
    reports.set(key, made);
    return made;
  };
  const out = (id: string) => (commands.get(id) as RemoteCommand).stdout;
  const cmd = (id: string) => commands.get(id) as RemoteCommand;
  for (const step of steps) {
    const kind = step.kind;
    const ctx = src.context(step.id);
    if (step.frozen) {
      commands.set(step.id, stepCommand(parent, name, { step, scripts: { create: "" }, stdin: "", connection: src.connection(step.runsOn), secretOutput: false, dependsOn: [] }, former));
      if (kind.endpointFrom !== undefined) endpoints.set(step.node, ctx.node.criSocket ?? "unknown (the machine is gone)");
      continue;
    }
    // Unset for the node's prepare step, which reports it.
    const endpoint = endpoints.get(step.node);
    const after = step.after.map(cmd);
    // The rollout line's waits, decided by what the nodes reported in their prepare steps.
    const line = step.line;
    // After the step's own waits (one Output at most: as its value's resources, then the reports' prepare steps).
    const lineWaits = line === undefined ? [] : combine([joinedReports(line)], ([had]) => lineAfter(line, (n) => had.get(n) ?? true).map(cmd));
    const dependsOn = Array.isArray(lineWaits) ? [...after, ...lineWaits] : [...after, lineWaits];
    const stdinSpec = kind.stdin;
    // Only a step with stdin data waits for the values it is made from (every Output costs the SDK a few promises).
    // With args given as Outputs the step's context is known late (src.late); its scripts and stdin wait for it.
    const late = src.late;
    const endpointOf = (n: string) => endpoints.get(n) as string | pulumi.Output<string>;
    // The step's values head its stdin (shown by `pulumi preview --diff`), known now when its endpoint is.
    const withValues = (c: StepContext, ep: string, d: string) => {
      const v = stepValues(c, ep);
      return stdinWithValues(v.title, v.values, d);
    };
    const knownEndpoint = ctx.node.criSocket ?? (kind.endpointFrom !== undefined ? "" : undefined);
    const shownEndpoint = endpoint ?? knownEndpoint ?? "";
    /** What `c`'s step reads on stdin besides its endpoint: earlier steps' stdout, other nodes' endpoints. */
    const readsOf = (c: StepContext) => ({ reads: stdinSpec?.reads?.(c) ?? [], nodes: stdinSpec?.endpointsOf?.(c) ?? [] });
    const valuesOf = (r: { reads: string[]; nodes: string[] }) => [...r.reads.map(out), ...r.nodes.map(endpointOf)];
    /** The script's data on stdin, from `values`: the stdout of each step `r` reads, then each node's endpoint. */
    const dataOf = (c: StepContext, ep: string, r: { reads: string[]; nodes: string[] }, values: string[]) =>
      stdinSpec === undefined ? "" : stdinSpec.render(c, runValues(step.id, ep, r.reads, r.nodes, values));
    /** The stdin of `c`'s step once its endpoint and what it reads are known. */
    const stdinOf = (c: StepContext) => {
      const r = readsOf(c);
      return combine([shownEndpoint, ...valuesOf(r)], ([ep, ...values]) =>
        withValues(c, ep, dataOf(c, (endpoint === undefined ? undefined : ep) as string, r, values as string[])),
      );
    };
    let stdin: pulumi.Input<string>;
    if (late !== undefined && !pulumi.Output.isInstance(shownEndpoint)) {
      // The endpoint declared: the stdin waits for the context, then for what the context says it reads
      // (while the context is unknown it carries the context's resources alone, as the form below does).
      stdin = late.apply((contextOf) => stdinOf(contextOf(step.id))) as pulumi.Output<string>;
    } else if (late !== undefined) {
      // The endpoint detected: the data waits for the context, then for what the context says it reads;
      // the values ahead of it for the context and the endpoint. Kept apart, so that while the context is
      // unknown (at preview) the stdin still carries the endpoint's resources (its prepare step).
      const data =
        stdinSpec === undefined
          ? ""
          : (late.apply((contextOf) => {
              const c = contextOf(step.id);
              const r = readsOf(c);
              return combine([endpoint, ...valuesOf(r)], ([e, ...values]) => dataOf(c, e as string, r, values as string[]));
            }) as pulumi.Output<string>);
      stdin = combine([late, shownEndpoint, data], ([contextOf, ep, d]) => withValues(contextOf(step.id), ep, d));
    } else if (stdinSpec === undefined && knownEndpoint !== undefined) {
      stdin = withValues(ctx, knownEndpoint, "");
    } else {
      stdin = stdinOf(ctx);
    }
    const early = src.early(step.id);
    // The scripts rendered with the node's endpoint once known; at construction they were rendered with
    // the declared one (or kubeadm's default): the same when the endpoint is declared.
    const scriptsAt = (c: StepContext, ep: string) => (c === ctx && ep === (ctx.node.criSocket ?? DEFAULT_CRI_SOCKET) ? early : kind.scripts(c, ep));
    const resolved = late
      ? late.apply((contextOf) => {
          const c = contextOf(step.id);
          return kind.scriptsUseEndpoint ? combine([endpoint as string | pulumi.Output<string>], ([ep]) => scriptsAt(c, ep)) : kind.scripts(c, c.node.criSocket ?? DEFAULT_CRI_SOCKET);
        })
      : kind.scriptsUseEndpoint
        ? combine([endpoint as string | pulumi.Output<string>], ([ep]) => scriptsAt(ctx, ep))
        : undefined;
    const made = stepCommand(parent, name, {
      step,
      scripts:
        resolved === undefined
          ? early
          : pulumi.Output.isInstance(resolved)
            ? { all: resolved as pulumi.Output<StepScripts>, withDelete: early.delete !== undefined }
            : { create: resolved.create, update: resolved.update ?? resolved.create, ...(early.delete !== undefined ? { delete: resolved.delete as string } : {}) },
      // idleOnJoin: on a node that joins in this run (its prepare said so) the create runs nothing; a
      // batch's step, when every member does.
      ...(kind.idleOnJoin === true ? { createRuns: createRuns(step, joined) } : {}),
      connection: src.connection(step.runsOn),
      stdin: stdinSpec?.secret ? pulumi.secret(stdin) : stdin,
      secretOutput: kind.secretOutput ?? false,
      dataOutput: kind.dataOutput,
      dependsOn,
      // kubeadm init/join run once: a later change of their configuration (a new version, new join
      // material, kubeletExtraArgs or taints of a joined node) changes nothing and is not an update.
      // An idle create kept (idleCreateKept) is not updated for running nothing once its node had joined.
      ignoreChanges: kind.runsOnce ? ["stdin"] : kind.idleCreateKept ? ["create"] : undefined,
      // A join wave's steps: a change of the wave's members replaces them (they have no delete).
      ...(kind.triggers !== undefined ? { triggers: kind.triggers(ctx) } : {}),
      retainOnDelete: src.retainOnDelete,
    }, former);
    commands.set(step.id, made);
    const endpointFrom = kind.endpointFrom;
    if (endpointFrom !== undefined) {
      const declared = ctx.node.criSocket;
      endpoints.set(step.node, declared !== undefined ? declared : made.stdout.apply((o) => endpointFrom(step.node, o)));
    }
    const joinedFrom = kind.joinedFrom;
    if (joinedFrom !== undefined) joined.set(step.node, made.stdout.apply((o) => joinedFrom(o)));
  }
  return { stdout: out, endpoint: (node) => endpoints.get(node) as string | pulumi.Output<string>, all: () => [...commands.values()] };
}

/**
 * The `clusterIdentifier` of the Cluster's `@pulumi/kubernetes` Provider: `kubeadm cluster initialized on
 * node "<name>"`, the first control-plane node, which ran `kubeadm init` and stays for the life of the
 * cluster (a change is refused, `checkInitNode`). pulumi-kubernetes replaces a Provider (and so every
 * resource on it) only when this value changes, where without it a kubeconfig unknown at preview (the
 * admin kubeconfig is read again by a step that runs in this `up`) plans a replacement that the `up`
 * does not make. It is known at preview and does not hold the component's name, so a rename of the
 * Cluster (aliases) keeps it. Source: pulumi-kubernetes' `DiffConfig` (provider/pkg/provider/provider.go).
 */
export function providerClusterIdentifier(firstControlPlaneNode: string): string {
  return `kubeadm cluster initialized on node "${firstControlPlaneNode}"`;
}

/**
 * Whether an `idleOnJoin` step's create runs its script: its node had joined before this run (its prepare
 * report), or, for a batch's step (`members`), any member had, or any node it uncordons first
 * (`uncordonsFirst`: the batch before). True where no report exists.
 */
function createRuns(step: Step, joined: Map<string, pulumi.Output<boolean>>): boolean | pulumi.Output<boolean> {
  if (step.members === undefined) return joined.get(step.node) ?? true;
  const nodes = [...step.members, ...(step.uncordonsFirst ?? [])];
  return combine(nodes.map((m) => joined.get(m) ?? true), (flags) => flags.some((f) => f === true));
}

/** Each Cluster's kubernetes Provider (kept outside the class: a property would be a schema output). */
const providers = new WeakMap<pulumi.ComponentResource, k8s.Provider>();

/**
 * A kubeadm Kubernetes cluster on machines reached over SSH, each node's CRI socket kept node-local
 * wherever the `NodeLocalCRISocket` gate is in effect (KEP-4656). Type token `kubeadm:index:Cluster`.
 *
 * `pulumi up` on a new cluster: `prepare` every node (check kubeadm, settle the CRI socket), `kubeadm
 * init` on the first control-plane node, other control-plane nodes join one at a time, workers in
 * parallel (`maxConcurrentJoins`), each join with fresh, secret join material; then each node's kubelet
 * files are made what that kubeadm version leaves (instance-config.yaml / config.yaml /
 * kubeadm-flags.env, backed up and replaced atomically) and its Node labelled and its cri-socket
 * annotation removed (gate in effect) or set (legacy). The `plan` output says what a run changes.
 *
 * @throws pulumi.InputPropertiesError at construction (so at preview, before any remote command
 *   exists) on bad args, with the message naming the node and the field (see `validateCluster`) and the
 *   property path (`nodes[1].criSocket`); also for an Output in a field that decides the plan. An
 *   Output arg (`controlPlaneEndpoint`, a kubelet flag value, an install command) is checked once known:
 *   a bad value fails the preview or the `up` before any step runs.
 */
export class Cluster extends pulumi.ComponentResource {
  /** The admin kubeconfig of the cluster (secret). */
  public readonly kubeconfig: pulumi.Output<string>;
  /**
   * A `@pulumi/kubernetes` Provider built from `kubeconfig`, for deploying workloads onto the cluster
   * from a TypeScript program; undefined when `kubernetesProvider` is false. Not an output of the
   * package's schema (a getter, which schema inference skips): other languages build their own Provider
   * from `kubeconfig`, and the generated SDKs need no kubernetes package.
   */
  public get provider(): k8s.Provider | undefined {
    return providers.get(this);
  }
  /** Per-node status: name, role, resolved CRI endpoint, node-local or not. */
  public readonly nodes: pulumi.Output<NodeStatus[]>;
  /**
   * What this run changes, in plain words, known at preview: one line per node that changes, in rollout
   * order (a join or `kubeadm init`, a version step, a runtime switch, a gate toggle, a machine gone),
   * removed nodes last (drained, reset, Node deleted); one `nothing to change: ...` line when the
   * component's record of the last `up` says the cluster is as asked. At preview the record is the last
   * `up`'s; after an `up` it is that `up`'s own, so the stack output then says nothing to change.
   * `refused: <why>` for a refused plan (a version step kubeadm refuses, a moved init node, a gone mark
   * taken off a node still in nodes). The full step list of the desired state: `describePlan(buildPlan(...))`.
   */
  public readonly plan: pulumi.Output<string[]>;
  /** The version this program asks for, `v1.34.2`. */
  public readonly kubernetesVersion: pulumi.Output<string>;

  constructor(name: string, args: ClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    // Args given as Outputs where users have them (deferred.ts): planned with placeholders now, their
    // steps' scripts and stdin rendered (and the values validated) once known.
    const deferred = asInputErrors(args.nodes, () => deferredArgs(args));
    const planArgs = deferred?.placeholders ?? args;
    const cluster = asInputErrors(args.nodes, () => validateCluster(clusterSpec(planArgs)));
    const planOptions = { maxConcurrentJoins: args.maxConcurrentJoins, maxUnavailableWorkers: args.maxUnavailableWorkers };
    const steps = buildPlan(cluster, planOptions);
    const resourceName = (id: string) => `${name}-${id}`;
    // Earlier names of this Cluster (`aliases: [{ name: "<old>" }]`): every child keeps its resource.
    const former = (opts?.aliases ?? []).flatMap((a) =>
      typeof a === "object" && a !== null && "name" in a && typeof a.name === "string" ? [a.name] : [],
    );
    const formerResourceNames = (id: string) => former.map((f) => `${f}-${id}`);
    const contextsOf = (c: ValidCluster, settings: StepSettings) =>
      new Map<string, StepContext>(
        steps.map((step) => [
          step.id,
          {
            cluster: c,
            node: c.nodes.find((n) => n.name === step.node) as ValidNode,
            step,
            settings,
            owner: resourceName(step.id),
            formerOwners: formerResourceNames(step.id),
            resourceName,
            formerResourceNames,
          },
        ]),
      );
    // Render every script before anything is registered: option errors surface here, not midway. (Kinds
    // whose scripts use the node's endpoint are rendered again below once the prepare step reported it.)
    const render = (contexts: Map<string, StepContext>) =>
      new Map(
        steps.map((s) => {
          const ctx = contexts.get(s.id) as StepContext;
          return [s.id, s.kind.scripts(ctx, ctx.node.criSocket ?? DEFAULT_CRI_SOCKET)];
        }),
      );
    const contexts = contextsOf(cluster, stepSettings(planArgs));
    const scripts = render(contexts);
    // Once the Output args are known: the contexts with their values, or why they are refused.
    const late = deferred?.resolved.apply((a): { contexts?: Map<string, StepContext>; problem?: string } => {
      try {
        const c = contextsOf(validateCluster(clusterSpec(a)), stepSettings(a));
        render(c);
        return { contexts: c };
      } catch (e) {
        return { problem: (e as Error).message };
      }
    });
    super("kubeadm:index:Cluster", name, {}, opts);
    for (const w of cluster.warnings) pulumi.log.warn(w, this);
    if (cluster.kubeadmFeatureGates[NODE_LOCAL_CRI_SOCKET] === false && cluster.version.minor >= 34) {
      pulumi.log.warn(`featureGates.${NODE_LOCAL_CRI_SOCKET}: false keeps the legacy flag and annotation on ${cluster.version.text}, but kubeadm 1.36 locks the gate on: turn it back on before upgrading to 1.36`, this);
    }

    const nodeArgs = new Map<string, NodeArgs>(args.nodes.map((n) => [n.name, n]));
    for (const n of args.nodes) {
      if (n.hostKey === undefined || n.hostKey === null) {
        pulumi.log.warn(`node "${n.name}": hostKey is not set, so its SSH host key is NOT checked; pin it with hostKey`, this);
      }
    }
    const cp1Name = (cluster.controlPlane[0] as ValidNode).name;
    // One connection per node, shared by its steps; one secret Output of the default private key for all.
    const connections = new Map<string, ReturnType<typeof nodeConnection>>();
    const defaultKey = secretOrUndefined(args.ssh?.privateKey);
    const connection = (node: string) => {
      const known = connections.get(node);
      if (known !== undefined) return known;
      const made = nodeConnection(nodeArgs.get(node) as NodeArgs, args.ssh, defaultKey);
      connections.set(node, made);
      return made;
    };

    // What the last `up` recorded (in the state, read back through the engine): the init node, and at
    // preview the members and version. Every step waits for this check; a failed check registers nothing.
    const recorded = records(this, name, cluster, connection(cp1Name), former, opts?.retainOnDelete === true);
    // Before any step is registered: the plan must start from the node that ran init, and (at preview)
    // from a version kubeadm can upgrade. A refusal is an error of the deployment, and no step exists, so
    // nothing runs (a rejected Output in a step's inputs would leave the Pulumi program hanging).
    // At `up` the Output args' values are checked here too; at preview, where they may be unknown, no step
    // waits for them: a value known and refused fails the preview below.
    const lateAtUp = late !== undefined && !pulumi.runtime.isDryRun() ? late : pulumi.output({ problem: undefined });
    late?.apply((l) => {
      if (l.problem !== undefined && pulumi.runtime.isDryRun()) {
        refuse(this, name, l.problem, connection(cp1Name));
      }
    });
    const checked = pulumi.all([recorded.initNode, recorded.lastMembers, lateAtUp]).apply(([initNode, last, l]) => {
      try {
        if (l.problem !== undefined) throw new Error(l.problem);
        checkInitNode(name, cluster, initNode);
        const t = planTransitions(cluster, last);
        if (pulumi.runtime.isDryRun()) for (const line of t.warnings) pulumi.log.warn(line, this);
        return { refused: undefined, transitions: t, last };
      } catch (e) {
        const message = (e as Error).message;
        refuse(this, name, message, connection(cp1Name));
        return { refused: message, transitions: { warnings: [], byNode: new Map() } as Transitions, last };
      }
    });
    const registered = checked.apply((c) => {
      const r =
        c.refused !== undefined
          ? undefined
          : registerSteps(this, name, steps, {
              context: (id) => contexts.get(id) as StepContext,
              early: (id) => scripts.get(id) as StepScripts,
              ...(late !== undefined ? { late: late.apply((l) => (id: string) => (l.contexts ?? contexts).get(id) as StepContext) } : {}),
              connection,
              retainOnDelete: opts?.retainOnDelete === true,
            }, former);
      // At `up`, the members are recorded once every step succeeded (a refused plan keeps the old record).
      recorded.recordMembers(r?.all());
      return r;
    });

    this.kubeconfig = pulumi.secret(registered.apply((r) => (r ? r.stdout(`${cp1Name}-node-metadata`) : "")));
    if (args.kubernetesProvider !== false) {
      // clusterIdentifier: the provider is replaced (and every resource on it) only when this changes, not
      // whenever the kubeconfig is unknown in a preview (cp1's node-metadata runs again: an upgrade, a
      // label); it names the node that ran kubeadm init, which stays for the life of the cluster
      // (checkInitNode), and not the component's name, which a rename changes.
      const clusterIdentifier = providerClusterIdentifier(cp1Name);
      providers.set(this, new k8s.Provider(`${name}-provider`, { kubeconfig: this.kubeconfig, clusterIdentifier }, { parent: this }));
    }
    this.nodes = registered.apply((r): pulumi.Output<NodeStatus[]> =>
      r === undefined
        ? pulumi.output([])
        : pulumi.all(
            cluster.nodes.map((n) =>
              combine([r.endpoint(n.name)], ([criSocket]): NodeStatus => ({ name: n.name, role: n.role, criSocket, nodeLocalCriSocket: cluster.nodeLocalCriSocket })),
            ),
          ),
    );
    this.kubernetesVersion = pulumi.output(cluster.version.text);
    this.plan = checked.apply(({ refused, transitions: t, last }) =>
      refused !== undefined ? [`refused: ${refused}`] : describeChanges(name, cluster, steps, last, t, planOptions),
    );
    this.registerOutputs({ kubeconfig: this.kubeconfig, nodes: this.nodes, plan: this.plan, kubernetesVersion: this.kubernetesVersion });
  }
}
