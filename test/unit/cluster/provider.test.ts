/**
 * The Cluster's `@pulumi/kubernetes` Provider: built from the secret admin kubeconfig (read by the first
 * control-plane node's node-metadata step), with a `clusterIdentifier` known at preview that names the
 * node that ran kubeadm init and not the component, so neither a kubeconfig unknown in a preview nor a
 * rename of the Cluster plans the Provider's (and its resources') replacement.
 */
jest.mock("../../../components/cluster/remoteCommand", () => require("../helpers/recordingCommand").recordingCommandModule());

import { installMocks, isSecretInput, plain, registrations, settled, valueOf, SECRETS } from "../helpers/mocks";
import { clusterArgs } from "../helpers/fixtures";

let Cluster: typeof import("../../../components").Cluster;

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  ({ Cluster } = await import("../../../components"));
  for (const name of ["c", "renamed"]) await valueOf(new Cluster(name, clusterArgs()).nodes);
  const other = clusterArgs();
  // Another first control-plane node: another cluster (a second kubeadm init).
  other.nodes = [...other.nodes.slice(1, 3), other.nodes[0], ...other.nodes.slice(3)];
  await valueOf(new Cluster("other", other).nodes);
  await settled();
});

const provider = (cluster: string) => {
  const r = registrations.find((x) => x.type === "pulumi:providers:kubernetes" && x.name === `${cluster}-provider`);
  if (r === undefined) throw new Error(`no Provider ${cluster}-provider`);
  return r;
};

test("the Provider's kubeconfig is the secret admin kubeconfig cp1's node-metadata printed", () => {
  expect(isSecretInput(provider("c").inputs.kubeconfig)).toBe(true);
  expect(plain(provider("c").inputs.kubeconfig)).toBe(SECRETS.kubeconfig);
});

test("its clusterIdentifier names the node that ran kubeadm init: the same after a rename, another for another first node", () => {
  expect(plain(provider("c").inputs.clusterIdentifier)).toBe('kubeadm cluster initialized on node "cp1"');
  expect(plain(provider("renamed").inputs.clusterIdentifier)).toBe(plain(provider("c").inputs.clusterIdentifier));
  expect(plain(provider("other").inputs.clusterIdentifier)).toBe('kubeadm cluster initialized on node "cp2"');
});
