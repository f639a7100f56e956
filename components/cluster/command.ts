/**
 * THE one place a `command.remote.Command` is made (through `RemoteCommand`, remoteCommand.ts: the same
 * registration with fewer Outputs in this process), with the safety defaults DESIGN.md asks for:
 * - scripts wrapped by `remoteCommand` (bash -c with one quoted argument; sudo -n for non-root users),
 *   which first reads the step's values off its stdin (`stdinWithValues`); the scripts are hidden from
 *   `pulumi preview --diff` (`hideDiffs`), the values are not: a change reads as the changed value;
 * - secrets only on stdin, never in the command text; no `environment` (sshd usually refuses setenv);
 * - `addPreviousOutputInEnv: false` (it would also go through setenv);
 * - for steps whose output carries a secret: `additionalSecretOutputs: ["stdout", "stderr"]` and
 *   `logging: "none"` (a secret stdin does not make stdout secret);
 * - steps whose stdout is data for a later step (a file snapshot, the kubeadm-config ConfigMap) log only stderr;
 * - `triggers` (a replacement) only for steps without a `delete` (refused otherwise): a changed input is an
 *   update, and nothing whose delete is destructive (`kubeadm reset`, node removal) is replaced by a
 *   change. A replacement the user asks for (`pulumi up --replace`) is create-before-delete, as
 *   pulumi-command's default: the new resource claims the node before the old one's delete drops its
 *   claim, so the old delete does nothing (the ownership claims of lib.sh). Delete-before-replace would
 *   run the old delete first, with the node still claimed by it alone: a `--replace` would reset the
 *   node, and a delete cannot tell a replacement from a destroy;
 * - a frozen step (its node's machine is gone) keeps every recorded input and is retained on delete.
 *
 * The component's records (records.ts) and the refusal of a plan are Commands that run nothing:
 * `valueCommand` makes them, with the same defaults.
 */
import * as pulumi from "@pulumi/pulumi";
import type * as inputs from "@pulumi/command/types/input";
import { remoteCommand } from "../scripts/script";
import type { Step } from "../plan/steps";
import type { StepScripts } from "../scripts/types";
import { combine } from "./combine";
import { REMOTE_COMMAND_INPUTS, RemoteCommand } from "./remoteCommand";

/**
 * A step's scripts (`StepScripts`), each known now or once an earlier step reported (init/join need the
 * node's endpoint). `create` may resolve to undefined: the create runs no command (`idleOnJoin`).
 */
export interface StepScriptInputs {
  create: pulumi.Input<string | undefined>;
  /** Left out of the Command when it is the same string as `create` (an Output resolving to undefined: left out too). */
  update?: pulumi.Input<string | undefined>;
  delete?: pulumi.Input<string>;
}

/**
 * A step's scripts known only once an earlier step reported or the args given as Outputs are known, as
 * one Output: each command text is one `apply` of it.
 */
export interface LateStepScripts {
  all: pulumi.Output<StepScripts>;
  /** Whether the scripts have a delete (known at construction: the kind's scripts rendered then have one). */
  withDelete: boolean;
}

/** What `stepCommand` needs besides the step. */
export interface StepCommandArgs {
  step: Step;
  scripts: StepScriptInputs | LateStepScripts;
  /**
   * Whether the create runs its script (idleOnJoin: false on a node that joins in this run, so the create
   * runs no command). Unset: it always does.
   */
  createRuns?: boolean | pulumi.Output<boolean>;
  connection: pulumi.Input<inputs.remote.ConnectionArgs>;
  /**
   * The step's stdin: its values, `---`, then the script's data (`stdinWithValues`; secret where the
   * data carries a secret). The command text reads the values off before the script starts.
   */
  stdin: pulumi.Input<string>;
  /**
   * The step's stdout carries a secret: `true`, stdout and stderr secret and nothing logged (join
   * material); `"stdout"`, the stdout secret and only the stderr logged (the admin kubeconfig).
   */
  secretOutput: boolean | "stdout";
  /** The step's stdout is data for later steps (a file snapshot), too bulky to log. Ignored when secretOutput. */
  dataOutput?: boolean;
  /**
   * The resources the step waits for: each given as it is, or several as one Output (the waits of its
   * rollout line, known once the nodes reported). The SDK takes an Output in `dependsOn` as its value's
   * resources (an array's too) followed by the Output's own; an Output for the whole list instead would be
   * walked (`containsUnknowns`) with every resource in it, several times over (mergeOptions copies it).
   */
  dependsOn: Array<pulumi.Resource | pulumi.Output<pulumi.Resource[]>>;
  /** Inputs whose changes do not update the resource (Pulumi's ignoreChanges). */
  ignoreChanges?: string[];
  /**
   * The Cluster's own `retainOnDelete` (Pulumi does not pass it on to children): a delete drops the
   * resource from the state without running its delete command.
   */
  retainOnDelete?: boolean;
  /** Values whose change replaces the resource; only for steps without a delete. */
  triggers?: pulumi.Input<unknown[]>;
}


/** Scripts a value command runs after all (the members record: the node list on the first control-plane node). */
export interface ValueScripts {
  /** Create, and update (pulumi-command runs the create when no update is set). */
  create: string;
  delete: string;
  /** The node they run on: a missing library names its prepare step (`remoteCommand`'s `runsOn`). */
  runsOn: string;
}

/**
 * A Command that runs nothing (no create, update or delete) and only keeps `value` (JSON) in its stdin,
 * read back from the state: the component's records and the refusal of a plan. With `keep`, a recorded
 * value is never replaced by a new one (ignoreChanges). With `dependsOn`, the value is recorded only
 * once those resources succeeded (the engine registers nothing after a failed dependency). A value given
 * as a Promise is registered once it resolves (the program is kept running until then). With
 * `extra.scripts` it does run them (scripts hidden from the diff, kept with the value under `keep`; its
 * stdin, the value, is not read by them); `extra.retainOnDelete`: the Cluster's, for a record with a delete.
 */
export function valueCommand(
  parent: pulumi.Resource,
  name: string,
  value: unknown,
  connection: pulumi.Input<inputs.remote.ConnectionArgs>,
  keep: boolean,
  formerNames: string[] = [],
  dependsOn?: pulumi.Resource[],
  extra: { scripts?: ValueScripts; retainOnDelete?: boolean } = {},
): RemoteCommand {
  const { scripts, retainOnDelete } = extra;
  return withoutStackTraces(() => new RemoteCommand(
    name,
    {
      connection,
      stdin: value instanceof Promise ? value.then((v) => JSON.stringify(v)) : JSON.stringify(value),
      logging: "none",
      addPreviousOutputInEnv: false,
      ...(scripts !== undefined ? valueScriptTexts(scripts) : {}),
    },
    {
      parent,
      // A kept value keeps its scripts too (at preview; a refused plan does not write its node list).
      ignoreChanges: keep ? ["connection", "stdin", ...(scripts !== undefined ? ["create", "delete"] : [])] : ["connection"],
      ...aliasesFor(formerNames),
      ...(dependsOn !== undefined ? { dependsOn } : {}),
      ...(scripts !== undefined ? { hideDiffs: HIDDEN_FROM_DIFF } : {}),
      ...(retainOnDelete ? { retainOnDelete: true } : {}),
    },
  ));
}

/** A value command's create and delete texts (no values on their stdin: it is the recorded value). */
function valueScriptTexts(scripts: ValueScripts): { create: string; delete: string } {
  return { create: remoteCommand(scripts.create, false, scripts.runsOn), delete: remoteCommand(scripts.delete, false, scripts.runsOn) };
}

/**
 * Runs `make` (a Command's constructor) with `Error.stackTraceLimit` at 0, restored before it returns or
 * throws. Pulumi's Node.js SDK formats a stack trace (`new Error().stack`, through the source maps that
 * `pulumi up` enables) for about 60 promises of every Command it registers (four per output property,
 * kept for its promise-leak report), synchronously in the constructor: at 1000 nodes that was about half
 * of the program's evaluation time and a few hundred MB of stack text. The resource's own source position
 * (which the SDK takes with an unlimited stack of its own) is unchanged, and so is every input. Lost: the
 * stack frames of those promises in `PULUMI_DEBUG_PROMISE_LEAKS` reports, and of an error the constructor
 * or the engine's registration throws (its message stays), including one a user's resource
 * `transformations` (which run inside the constructor) throw. The limit is the process's own again
 * before any other code runs (JavaScript runs this to the end before anything else).
 */
export function withoutStackTraces<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The resource option `aliases` for the names a resource had before (empty: none). */
function aliasesFor(formerNames: string[]): { aliases?: pulumi.Alias[] } {
  return formerNames.length > 0 ? { aliases: formerNames.map((name) => ({ name })) } : {};
}

/** A script's command text (undefined stays undefined: no command). */
type CommandText = (script: string | undefined) => string | undefined;

/**
 * The command texts of a step that runs on `runsOn`: each script through `remoteCommand`, with its values
 * on stdin and `runsOn` as the script's `$1`, whose prepare step a missing library names as the step to
 * replace (scripts/library.ts).
 */
function commandTextOn(runsOn: string): CommandText {
  return (script) => (script === undefined ? undefined : remoteCommand(script, true, runsOn));
}

/**
 * The inputs `pulumi preview --diff` does not print (Pulumi's `hideDiffs`, display only: a change still
 * updates): the scripts. A change shows as `create (hidden)`, its meaning in the values at the head of
 * stdin.
 */
const HIDDEN_FROM_DIFF = ["create", "update", "delete"];

/**
 * The update script the Command takes (the rule of {@link commandTexts}): after an idle create the script
 * itself, else the update only where it differs from the create (unset: pulumi-command runs the create,
 * which is then the same script, and the state keeps one copy of it, not two).
 */
function updateScript<T>(create: T, update: T | undefined, idleCreate: boolean): T | undefined {
  return idleCreate ? (update ?? create) : update !== create ? update : undefined;
}

/**
 * The step's command texts as the Command takes them. pulumi-command runs `create` on an update when
 * `update` is unset, so an update equal to the create is left out, also where the create runs
 * (`createRuns` true); except with an idle create (`createRuns` false), whose update is the script
 * itself: a later rollout may change the step but not the node's prepare (whose report keeps saying the
 * node was joining), and an unset update would then run the empty create. (A node's report going from
 * joining to joined sets the create and unsets the update at once: the update runs the create, the same
 * script the update was.) With `createKept` (the step ignores changes of its create, `idleCreateKept`:
 * the recorded create stays unset once it was idle) the update is always the script.
 */
function commandTexts(
  scripts: StepScriptInputs | LateStepScripts,
  createRuns: boolean | pulumi.Output<boolean> | undefined,
  createKept: boolean,
  commandText: CommandText,
): { create: pulumi.Input<string | undefined>; update: pulumi.Input<string | undefined> | undefined; delete?: pulumi.Input<string | undefined> } {
  if ("all" in scripts) {
    const all = scripts.all;
    return {
      create: createRuns !== undefined ? combine([createRuns, all], ([runs, x]) => (runs ? commandText(x.create) : undefined)) : all.apply((x) => commandText(x.create)),
      update:
        createRuns !== undefined && !createKept
          ? combine([createRuns, all], ([runs, x]) => commandText(updateScript(x.create, x.update, !runs)))
          : all.apply((x) => commandText(updateScript(x.create, x.update, createRuns !== undefined))),
      ...(scripts.withDelete ? { delete: all.apply((x) => commandText(x.delete)) } : {}),
    };
  }
  /** The command text of a script that may not be known yet. */
  const wrap = <T extends string | undefined>(script: pulumi.Input<T>): pulumi.Input<T> => combine([script], ([x]) => commandText(x)) as pulumi.Input<T>;
  const del = scripts.delete !== undefined ? { delete: wrap(scripts.delete) } : {};
  if (createRuns !== undefined) {
    return {
      create: combine([createRuns, scripts.create], ([runs, text]) => (runs ? commandText(text) : undefined)),
      update: createKept
        ? wrap(updateScript(scripts.create, scripts.update, true) as pulumi.Input<string>)
        : combine([createRuns, scripts.create, scripts.update], ([runs, c, u]) => commandText(updateScript(c, u, !runs))),
      ...del,
    };
  }
  if (scripts.update === undefined || typeof scripts.update === "string" || typeof scripts.create === "string") {
    const update = updateScript(scripts.create, scripts.update, false);
    return { create: wrap(scripts.create), update: update !== undefined ? wrap(update) : undefined, ...del };
  }
  return { create: wrap(scripts.create), update: combine([scripts.create, scripts.update], ([c, u]) => commandText(updateScript(c, u, false))), ...del };
}

/**
 * Which of a step's output streams are secret, and which pulumi-command logs: a secret stream is never
 * logged. `secretOutput` true: both secret (join material); `"stdout"`: the stdout (the admin
 * kubeconfig), the stderr logged; `dataOutput`: the stdout is data for later steps, only the stderr logged.
 */
function outputStreams(secretOutput: boolean | "stdout", dataOutput: boolean): { secret: string[]; logging: string } {
  if (secretOutput === true) return { secret: ["stdout", "stderr"], logging: "none" };
  if (secretOutput === "stdout") return { secret: ["stdout"], logging: "stderr" };
  return { secret: [], logging: dataOutput ? "stderr" : "stdoutAndStderr" };
}

/**
 * Create the Command for one plan step, named `<cluster>-<step id>`, parented to the component.
 * @param formerClusterNames earlier names of the Cluster (its `aliases` with a name): the step's
 *   resource is aliased to `<former>-<step id>`, so a renamed Cluster keeps its resources.
 *
 * @throws Error when a step with a delete is given triggers.
 */
export function stepCommand(
  parent: pulumi.ComponentResource,
  clusterName: string,
  a: StepCommandArgs,
  formerClusterNames: string[] = [],
): RemoteCommand {
  // A renamed Cluster (`aliases: [{ name: "<old>" }]`): each step is the resource it was under the old name.
  const aliases = aliasesFor(formerClusterNames.map((f) => `${f}-${a.step.id}`));
  if (a.step.frozen) {
    // Whatever the program would give now, the recorded inputs stay (no update: nothing dials the gone
    // machine), a resource not in the state is made without a command, and the delete never runs.
    return withoutStackTraces(() => new RemoteCommand(
      `${clusterName}-${a.step.id}`,
      { connection: a.connection, addPreviousOutputInEnv: false, logging: "none" },
      { parent, retainOnDelete: true, ignoreChanges: [...REMOTE_COMMAND_INPUTS], ...aliases },
    ));
  }
  const texts = commandTexts(a.scripts, a.createRuns, a.ignoreChanges?.includes("create") === true, commandTextOn(a.step.runsOn));
  if (a.triggers !== undefined && texts.delete !== undefined) {
    throw new Error(`${a.step.id}: a step with a delete must never be replaced, so it takes no triggers`);
  }
  const { create, update } = texts;
  const streams = outputStreams(a.secretOutput, a.dataOutput === true);
  return withoutStackTraces(() => new RemoteCommand(
    `${clusterName}-${a.step.id}`,
    {
      connection: a.connection,
      // An Output resolving to undefined leaves `create` (or `update`) unset.
      create: create as pulumi.Input<string>,
      ...(update !== undefined ? { update: update as pulumi.Input<string> } : {}),
      ...(texts.delete !== undefined ? { delete: texts.delete as pulumi.Input<string> } : {}),
      stdin: a.stdin,
      ...(a.triggers !== undefined ? { triggers: a.triggers } : {}),
      addPreviousOutputInEnv: false,
      logging: streams.logging,
    },
    {
      parent,
      ...aliases,
      ...(a.retainOnDelete ? { retainOnDelete: true } : {}),
      dependsOn: a.dependsOn as pulumi.Input<pulumi.Resource>[],
      ...(a.ignoreChanges !== undefined ? { ignoreChanges: a.ignoreChanges } : {}),
      ...(streams.secret.length > 0 ? { additionalSecretOutputs: streams.secret } : {}),
      hideDiffs: a.step.kind.stdinHiddenFromDiff ? [...HIDDEN_FROM_DIFF, "stdin"] : HIDDEN_FROM_DIFF,
    },
  ));
}
