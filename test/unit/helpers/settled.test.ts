/**
 * `settled()` (the mocks' wait for the program's registrations) waits for a resource whose registration
 * waits on something outside the registrations (an input resolved later), as the Node.js language host
 * does; a quiet 30 ms alone returned before it, and under load a 1000-node evaluation once ended after
 * 1013 of its 7205 resources.
 */
import * as command from "@pulumi/command";
import { installMocks, registrations, settled } from "./mocks";

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
});

test("a resource whose input resolves after the quiet period is registered when settled() returns", async () => {
  let release: (v: string) => void = () => undefined;
  const create = new Promise<string>((resolve) => (release = resolve));
  new command.remote.Command("late", { connection: { host: "10.0.0.9" }, create });
  // Resolved by a timer well after the quiet period: the registration cannot start before it.
  setTimeout(() => release("true"), 200);
  await settled();
  expect(registrations.map((r) => r.name)).toContain("late");
});
