/**
 * For `jest.mock("@pulumi/command", () => require("../helpers/recordingCommand").recordingCommandModule())`:
 * @pulumi/command with a remote Command that records each construction's name, args and resource
 * options (which the mock runtime does not show), in `__made`.
 */
export interface Made {
  name: string;
  args: Record<string, unknown>;
  opts: Record<string, unknown>;
}

/** The mocked module. */
export function recordingCommandModule(): Record<string, unknown> {
  const actual = jest.requireActual("@pulumi/command");
  const made: Made[] = [];
  class Recording extends actual.remote.Command {
    constructor(name: string, args: Record<string, unknown>, opts: Record<string, unknown>) {
      super(name, args, opts);
      made.push({ name, args, opts });
    }
  }
  return { ...actual, remote: { ...actual.remote, Command: Recording }, __made: made };
}

/** What the mocked module recorded. */
export function madeCommands(): Made[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require("@pulumi/command") as { __made: Made[] }).__made;
}
