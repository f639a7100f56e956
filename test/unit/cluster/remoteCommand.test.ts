/**
 * RemoteCommand (components/cluster/remoteCommand.ts) registers what pulumi-command's own constructor
 * registers (type, inputs, secrecy, plugin version, resource options), with an Output only for the
 * properties it is given and one connection Output per connection object, where pulumi-command's
 * constructor makes all eleven properties' Outputs and wraps the connection again for every Command.
 */
import * as pulumi from "@pulumi/pulumi";
import * as command from "@pulumi/command";
import * as commandInputs from "@pulumi/command/types/input";
import { installMocks, isSecretInput, plain, registrations, settled } from "../helpers/mocks";
import { COMMAND_PLUGIN_VERSION, REMOTE_COMMAND_TYPE, RemoteCommand } from "../../../components/cluster/remoteCommand";

/** Every RegisterResourceRequest the SDK sent, by resource name, as plain objects. */
const requests = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  // The mock monitor sees the whole request (options included), the mocks' newResource only the inputs.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const monitor = require("@pulumi/pulumi/runtime/settings").getMonitor() as { registerResource: (req: { toObject(): Record<string, unknown> }, cb: unknown) => unknown };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    const o = req.toObject();
    requests.set(String(o["name"]), o);
    return register(req, cb);
  };
});

/** A request without what names the resource or where its constructor was called from. */
function comparable(name: string): Record<string, unknown> {
  const o = { ...requests.get(name) };
  for (const k of ["name", "sourceposition", "stacktrace"]) delete o[k];
  return o;
}

const key = pulumi.secret("-----BEGIN OPENSSH PRIVATE KEY-----\nunit\n-----END OPENSSH PRIVATE KEY-----\n");

/** A resource the shapes depend on (as a step depends on the steps before it). */
class Earlier extends pulumi.CustomResource {
  constructor() {
    super("test:index:Earlier", "earlier", { out: undefined });
  }
}
const earlier = new Earlier();

/** Argument and option shapes the component gives: a step with every script, a plain step, a join wave's step, a record, a frozen step. */
const shapes: Array<[string, Record<string, unknown>, pulumi.CustomResourceOptions]> = [
  [
    "full",
    { create: "echo c", update: pulumi.output("echo u"), delete: "echo d", stdin: pulumi.secret("s"), logging: "none", addPreviousOutputInEnv: false },
    { additionalSecretOutputs: ["stdout", "stderr"], hideDiffs: ["create", "update", "delete", "stdin"], retainOnDelete: true, dependsOn: [earlier, pulumi.output([earlier]) as unknown as pulumi.Input<pulumi.Resource>], aliases: [{ name: "old-full" }] },
  ],
  ["plain", { create: "echo c", stdin: "v", logging: "stdoutAndStderr", addPreviousOutputInEnv: false }, { hideDiffs: ["create", "update", "delete"], ignoreChanges: ["stdin"] }],
  ["wave", { create: "echo c", stdin: "v", triggers: ["a", "b"], addPreviousOutputInEnv: false }, { ignoreChanges: ["create"] }],
  ["record", { stdin: Promise.resolve(JSON.stringify({ a: 1 })), logging: "none", addPreviousOutputInEnv: false }, { ignoreChanges: ["connection", "stdin"] }],
  ["frozen", { addPreviousOutputInEnv: false, logging: "none" }, { retainOnDelete: true, ignoreChanges: ["connection", "create", "update", "delete", "triggers", "stdin", "logging", "environment", "addPreviousOutputInEnv"] }],
];

test.each(shapes)("%s: the same registration as pulumi-command's Command", async (shape, args, opts) => {
  const connection = { host: "10.0.0.7", port: 2222, user: "admin", privateKey: key, proxy: { host: "10.0.0.1", privateKey: key } };
  const theirs = new command.remote.Command(`theirs-${shape}`, { connection, ...args }, opts);
  const ours = new RemoteCommand(`ours-${shape}`, { connection, ...args }, opts);
  await settled();
  const reg = (name: string) => registrations.find((r) => r.name === name);
  expect(reg(`ours-${shape}`)?.type).toBe(REMOTE_COMMAND_TYPE);
  expect(plain(reg(`ours-${shape}`)?.inputs)).toEqual(plain(reg(`theirs-${shape}`)?.inputs));
  // Secret where pulumi-command's are: the connection always, the stdin when given secret.
  const secrets = (name: string) => Object.entries(reg(name)?.inputs ?? {}).filter(([, v]) => isSecretInput(v)).map(([k]) => k).sort();
  expect(secrets(`ours-${shape}`)).toEqual(secrets(`theirs-${shape}`));
  expect(secrets(`ours-${shape}`)).toContain("connection");
  const internals = (r: pulumi.Resource) => r as unknown as { __version?: string };
  expect(internals(ours).__version).toBe(COMMAND_PLUGIN_VERSION);
  expect(internals(ours).__version).toBe(internals(theirs).__version);
  // The whole request: inputs, dependencies, secrecy, version, additionalSecretOutputs, replaceOnChanges,
  // aliases, ignoreChanges, hideDiffs, retainOnDelete, ...
  expect(comparable(`ours-${shape}`)["version"]).toBe(COMMAND_PLUGIN_VERSION);
  expect(comparable(`ours-${shape}`)).toEqual(comparable(`theirs-${shape}`));
});

test("an Output only for the properties given, and stdin and stdout", () => {
  const ours = new RemoteCommand("props", { connection: { host: "10.0.0.8" }, create: "true", addPreviousOutputInEnv: false });
  const outputs = Object.keys(ours).filter((k) => pulumi.Output.isInstance((ours as unknown as Record<string, unknown>)[k]) && k !== "urn" && k !== "id");
  expect(outputs.sort()).toEqual(["addPreviousOutputInEnv", "connection", "create", "stdin", "stdout"]);
  const theirs = new command.remote.Command("props-theirs", { connection: { host: "10.0.0.8" }, create: "true", addPreviousOutputInEnv: false });
  expect(Object.keys(theirs).filter((k) => pulumi.Output.isInstance((theirs as unknown as Record<string, unknown>)[k])).length).toBeGreaterThan(outputs.length + 2);
});

test("pulumi-command's connection defaults are applied once per connection object, not once per Command", async () => {
  const spy = jest.spyOn(commandInputs.remote, "connectionArgsProvideDefaults");
  try {
    const a = { host: "10.0.0.9", privateKey: key };
    const b = { host: "10.0.0.10", privateKey: key };
    for (let i = 0; i < 5; i++) {
      new RemoteCommand(`shared-a-${i}`, { connection: a, create: "true" });
      new RemoteCommand(`shared-b-${i}`, { connection: b, create: "true" });
    }
    await settled();
    expect(spy).toHaveBeenCalledTimes(2);
    const conn = (name: string) => plain(registrations.find((r) => r.name === name)?.inputs["connection"]) as Record<string, unknown>;
    expect(conn("shared-a-4")).toEqual(expect.objectContaining({ host: "10.0.0.9", port: 22, user: "root" }));
    expect(conn("shared-b-0")).toEqual(expect.objectContaining({ host: "10.0.0.10", port: 22, user: "root" }));
  } finally {
    spy.mockRestore();
  }
});

test("a missing connection is refused by name (undefined, as pulumi-command's constructor refuses it; null too)", () => {
  for (const connection of [undefined, null]) {
    expect(() => new RemoteCommand("no-connection", { connection } as never)).toThrow("Missing required property 'connection'");
  }
});
