/** The benchmark's pure parts: options, bounds, sshd log counting, timeline spans, critical path. No timing asserted. */
import { parseOptions, SCENARIOS } from "./options";
import { provisionBound, provisionBoundWithWindow, upgradeBound } from "./bounds";
import { countLines } from "./sshdlog";
import { Timeline } from "./timeline";
import { criticalPath } from "./critical";
import { kindOf } from "./steps";
import { nextMinor } from "./upgrade";
import { addressOf } from "./lab";

test("options: all scenarios by default, --only picks, unknown refused", () => {
  expect(parseOptions([]).only).toEqual([...SCENARIOS]);
  expect(parseOptions(["--json", "--only", "eval"])).toMatchObject({ json: true, only: ["eval"] });
  expect(parseOptions(["--only=noop,provision"]).only).toEqual(["noop", "provision"]);
  expect(() => parseOptions(["--only", "fast"])).toThrow(/unknown scenario "fast"/);
  expect(parseOptions(["--eval-sizes", "5,50"]).evalSizes).toEqual([5, 50]);
});

test("bounds as issue 5 defines them", () => {
  const c = { controlPlanes: 3, workers: 20 };
  expect(provisionBound(c, { init: 4, join: 2 })).toBe(10);
  expect(provisionBoundWithWindow(c, { init: 4, join: 2 }, 10)).toBe(12);
  const d = { upgradeApply: 3, upgradeNode: 2, drain: 1 };
  expect(upgradeBound(c, d, 1)).toBe(3 + 2 * 2 + 20 * 3);
  expect(upgradeBound(c, d, 5)).toBe(3 + 2 * 2 + 4 * 3);
});

test("sshd log: one Accepted publickey line per connection, Starting session per session", () => {
  const log = [
    "Connection from 127.0.0.1 port 4000 on 127.0.0.150 port 22 rdomain \"\"",
    "Accepted publickey for root from 127.0.0.1 port 4000 ssh2: ED25519 SHA256:abc",
    "Starting session: command for root from 127.0.0.1 port 4000 id 0",
    "Close session: user root from 127.0.0.1 port 4000 id 0",
    "Accepted publickey for root from 127.0.0.1 port 4001 ssh2: ED25519 SHA256:abc",
  ].join("\n");
  expect(countLines(log)).toEqual({ accepted: 2, starting: 1 });
});

test("timeline spans and the critical path through recorded dependencies", () => {
  const tl = new Timeline();
  tl.log("c-cp-1-prepare: create ...");
  tl.log("c-cp-1-prepare: create done (0.1s)");
  const spans = tl.spans();
  expect([...spans.keys()]).toEqual(["c-cp-1-prepare"]);
  expect(spans.get("c-cp-1-prepare")?.end).toBeDefined();

  const s = new Map([
    ["a", { start: 0, end: 1 }],
    ["b", { start: 0, end: 3 }],
    ["c", { start: 3.5, end: 5 }],
    ["d", { start: 1, end: 2 }],
  ]);
  const path = criticalPath({ c: ["a", "b"], b: [], d: ["a"] }, s);
  expect(path.map((l) => [l.step, l.gap_s, l.took_s])).toEqual([["b", 0, 3], ["c", 0.5, 1.5]]);
});

test("names, versions, addresses", () => {
  expect(kindOf("bench-worker-12-join-token")).toBe("join-token");
  expect(kindOf("bench-cp-1-init")).toBe("init");
  expect(nextMinor("v1.33.2")).toBe("v1.34.0");
  expect(addressOf(0)).toBe("127.0.0.150");
  expect(() => addressOf(50)).toThrow(/outside/);
});
