/**
 * For `jest.mock("../../../components/cluster/remoteCommand", () => require("../helpers/recordingCommand").recordingCommandModule())`:
 * the component's remote Command (components/cluster/remoteCommand.ts, every step's and record's
 * resource) recording each construction's name, args and resource options (which the mock runtime does
 * not show), in `__made`.
 */
export interface Made {
  name: string;
  args: Record<string, unknown>;
  opts: Record<string, unknown>;
}

/** The mocked module. */
export function recordingCommandModule(): Record<string, unknown> {
  const actual = jest.requireActual("../../../components/cluster/remoteCommand");
  const made: Made[] = [];
  class Recording extends actual.RemoteCommand {
    constructor(name: string, args: Record<string, unknown>, opts: Record<string, unknown>) {
      super(name, args, opts);
      made.push({ name, args, opts });
    }
  }
  return { ...actual, RemoteCommand: Recording, __made: made };
}

/** What the mocked module recorded. */
export function madeCommands(): Made[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require("../../../components/cluster/remoteCommand") as { __made: Made[] }).__made;
}
