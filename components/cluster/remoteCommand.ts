/**
 * pulumi-command's remote Command (`command:remote:Command`, served by the `command` provider plugin of
 * the installed @pulumi/command), registered with only the properties the component gives it.
 *
 * The engine and the provider see the same registration as through `new command.remote.Command(...)`:
 * the same type token and plugin version, the same inputs (the SDK sends no property whose value is
 * undefined), `connection` with pulumi-command's defaults and secret, `additionalSecretOutputs:
 * ["connection"]` and `replaceOnChanges: ["triggers[*]"]`, as its constructor sets them. What differs
 * is the SDK's own work in this process: that constructor gives the resource all eleven of its
 * properties, an Output each (with four promises and their resolvers), the undefined ones included,
 * and wraps the connection in three more Outputs for every Command; this one makes Outputs only for
 * the properties given (and `stdout`), and wraps each connection object once, for all the Commands of
 * its node. Measured with 7205 Commands under the mock runtime (7 per node): 1.44 GB and 6.9 to 8.2 s
 * through pulumi-command's constructor, 0.90 GB and 4.6 to 6.2 s through this one.
 */
import * as pulumi from "@pulumi/pulumi";
import * as commandInputs from "@pulumi/command/types/input";

/** pulumi-command's remote Command's type token. */
export const REMOTE_COMMAND_TYPE = "command:remote:Command";

/** The `command` plugin version the engine loads for it: the installed @pulumi/command's, as its own constructor asks. */
export const COMMAND_PLUGIN_VERSION: string = (require("@pulumi/command/package.json") as { version: string }).version.replace(/^v/, "");

/** The inputs of pulumi-command's remote Command this package sets (its others, `environment`, never). */
export interface RemoteCommandArgs {
  /** The SSH connection; pulumi-command's defaults are applied and the whole made secret. */
  connection: pulumi.Input<commandInputs.remote.ConnectionArgs>;
  create?: pulumi.Input<string>;
  update?: pulumi.Input<string>;
  delete?: pulumi.Input<string>;
  stdin?: pulumi.Input<string>;
  triggers?: pulumi.Input<unknown[]>;
  logging?: pulumi.Input<string>;
  addPreviousOutputInEnv?: pulumi.Input<boolean>;
}

/** Every input of pulumi-command's remote Command, in its constructor's order (`environment` this package never sets). */
export const REMOTE_COMMAND_INPUTS = ["addPreviousOutputInEnv", "connection", "create", "delete", "environment", "logging", "stdin", "triggers", "update"] as const;

/**
 * Each connection object's secret Output with pulumi-command's defaults, made once (the component
 * hands every step of a node the same object).
 */
const wrapped = new WeakMap<object, pulumi.Output<commandInputs.remote.ConnectionArgs>>();

function secretConnection(connection: pulumi.Input<commandInputs.remote.ConnectionArgs>): pulumi.Output<commandInputs.remote.ConnectionArgs> {
  const known = wrapped.get(connection as object);
  if (known !== undefined) return known;
  const made = pulumi.secret(pulumi.output(connection).apply(commandInputs.remote.connectionArgsProvideDefaults));
  wrapped.set(connection as object, made);
  return made;
}

/**
 * A `command:remote:Command` (see the module comment): the Outputs `stdout` and, when given, each input
 * (`stdin`, ...). Resource options as given, plus what pulumi-command's constructor adds: the plugin
 * `version`, `connection` among the `additionalSecretOutputs`, `replaceOnChanges: ["triggers[*]"]`.
 *
 * @throws Error `Missing required property 'connection'` when `connection` is undefined, as
 *   pulumi-command's constructor does, and also when it is null (which that constructor would register
 *   with no connection at all).
 */
export class RemoteCommand extends pulumi.CustomResource {
  /** The command's standard output (its last run's); secret where `additionalSecretOutputs` names it. */
  declare readonly stdout: pulumi.Output<string>;
  /** The stdin it was given, as recorded in the state (undefined when none was). */
  declare readonly stdin: pulumi.Output<string>;

  constructor(name: string, args: RemoteCommandArgs, opts: pulumi.CustomResourceOptions = {}) {
    if (args.connection === undefined || args.connection === null) throw new Error("Missing required property 'connection'");
    const props: Record<string, unknown> = {};
    const given = args as RemoteCommandArgs & { environment?: never };
    for (const k of REMOTE_COMMAND_INPUTS) {
      if (given[k] !== undefined) props[k] = k === "connection" ? secretConnection(args.connection) : given[k];
    }
    // Always Outputs (stdin undefined when not given): what the component reads back.
    props["stdin"] = args.stdin;
    props["stdout"] = undefined;
    super(
      REMOTE_COMMAND_TYPE,
      name,
      props,
      {
        ...opts,
        version: opts.version ?? COMMAND_PLUGIN_VERSION,
        additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? []), "connection"],
        replaceOnChanges: [...(opts.replaceOnChanges ?? []), "triggers[*]"],
      },
    );
  }
}
