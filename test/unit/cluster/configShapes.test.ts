/**
 * Stack-config shapes (found by a review) that `requireObject` can hand the
 * component (arbitrary JSON) and that must be refused at construction with an error naming the node
 * and the field -- not crash with a TypeError, and not be accepted silently.
 */
import { installMocks, registrations, settled } from "../helpers/mocks";
import { clusterArgs } from "../helpers/fixtures";
import type { ClusterArgs } from "../../../components";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: false });
  ({ Cluster } = await import("../../../components"));
});

const base = clusterArgs();
const withNode = (i: number, extra: Record<string, unknown>): ClusterArgs =>
  ({ ...base, nodes: base.nodes.map((n, j) => (j === i ? { ...n, ...extra } : n)) }) as ClusterArgs;

function constructError(args: ClusterArgs): Error | undefined {
  try {
    new Cluster("c", args);
    return undefined;
  } catch (e) {
    return e as Error;
  }
}

const cases: Array<[string, ClusterArgs, RegExp]> = [
  ["a null entry in nodes", { ...base, nodes: [...base.nodes, null] } as unknown as ClusterArgs, /nodes\[5\]/],
  ["proxy: null", withNode(3, { proxy: null }), /node "w1": proxy/],
  ["proxy as a string", withNode(3, { proxy: "bastion.example.com" }), /node "w1": proxy/],
  ["proxy without a host", withNode(3, { proxy: { port: 22 } }), /node "w1": proxy\.host/],
  ["proxy port as a string", withNode(3, { proxy: { host: "b", port: "2222" } }), /node "w1": proxy\.port/],
  ["user as a number", withNode(3, { user: 1000 }), /node "w1": user/],
  ["hostKey as a number", withNode(3, { hostKey: 42 }), /node "w1": hostKey/],
  ["hostKey null (unpinned, and no warning)", withNode(3, { hostKey: null }), /node "w1": hostKey/],
  ["a host that an ssh client reads as an option", withNode(3, { host: "-oProxyCommand=/tmp/x" }), /node "w1": host/],
  ["a host with a port in it (duplicates 10.0.0.1:22 unnoticed)", withNode(3, { host: "10.0.0.1:22" }), /node "w1": host/],
  ["drainTimeoutSeconds NaN", { ...base, drainTimeoutSeconds: NaN }, /drainTimeoutSeconds/],
  ["drainTimeoutSeconds negative", { ...base, drainTimeoutSeconds: -5 }, /drainTimeoutSeconds/],
  ["drainTimeoutSeconds as a string with shell", { ...base, drainTimeoutSeconds: "1 ; touch /tmp/pwned ;" as unknown as number }, /drainTimeoutSeconds/],
];

test.each(cases)("%s is refused at construction, naming the field", async (_what, args, message) => {
  registrations.splice(0);
  const e = constructError(args);
  expect(e).toBeDefined();
  expect(e?.name).not.toBe("TypeError");
  expect(e?.message).toMatch(message);
  await settled();
});

test("a bad joinTokenTtl is refused even when there is nothing to join yet (one node)", () => {
  const args = { ...base, controlPlaneEndpoint: undefined, nodes: [base.nodes[0]!], joinTokenTtl: "forever" } as ClusterArgs;
  expect(constructError(args)?.message).toMatch(/joinTokenTtl/);
});
