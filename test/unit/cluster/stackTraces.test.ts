/**
 * Registering the component's Commands formats no stack traces beyond the SDK's own source position:
 * Pulumi's Node.js SDK formats one (through the source maps) for each of about 60 promises a Command's
 * constructor makes, which was half of the program's evaluation time at 1000 nodes (stepCommand and
 * valueCommand construct with Error.stackTraceLimit at 0, restored after).
 */
import { installMocks, registrations, settled, valueOf } from "../helpers/mocks";
import { clusterArgs } from "../helpers/fixtures";

let formatted = 0;
let limitAfter = 0;
let commandCount = 0;

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  const { Cluster } = await import("../../../components");
  const before = Error.prepareStackTrace;
  Error.stackTraceLimit = 7;
  // Count the stack traces formatted while the program registers its resources (frames > 0: a trace
  // with frames to format; one cut to 0 frames costs next to nothing).
  Error.prepareStackTrace = (error, frames) => {
    if (frames.length > 0) formatted++;
    return before !== undefined ? before(error, frames) : `${String(error)}\n${frames.map((f) => `    at ${String(f)}`).join("\n")}`;
  };
  try {
    const cluster = new Cluster("c", clusterArgs());
    await valueOf(cluster.nodes);
    await settled();
  } finally {
    Error.prepareStackTrace = before;
    limitAfter = Error.stackTraceLimit;
    Error.stackTraceLimit = 10;
  }
  commandCount = registrations.filter((r) => r.type === "command:remote:Command").length;
});

test("the process's Error.stackTraceLimit is its own again after the Commands are made", () => {
  expect(limitAfter).toBe(7);
});

test("a Command's registration formats a few stack traces, not one per promise of the SDK", () => {
  expect(commandCount).toBe(41);
  // Measured: 60 per Command when the constructor runs at the process's limit, 10 without (the source
  // position, and one per input the SDK awaits after the constructor returned).
  expect(formatted / commandCount).toBeLessThan(20);
});
