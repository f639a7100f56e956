/**
 * Secrets (SSH key, bootstrap token, certificate key, admin kubeconfig) never appear in command text,
 * travel only as secret inputs, and the steps whose output carries them are secret and unlogged.
 */
jest.mock("../../../components/cluster/remoteCommand", () => require("../helpers/recordingCommand").recordingCommandModule());

import { madeCommands } from "../helpers/recordingCommand";
import { installMocks, isSecretInput, plain, registrations, settled, valueOf, SECRETS } from "../helpers/mocks";
import { clusterArgs } from "../helpers/fixtures";
import * as pulumi from "@pulumi/pulumi";

let Cluster: typeof import("../../../components").Cluster;
let cluster: InstanceType<typeof Cluster>;
const made = madeCommands();

beforeAll(async () => {
  await installMocks({ nodeLocal: true });
  ({ Cluster } = await import("../../../components"));
  cluster = new Cluster("c", clusterArgs());
  await valueOf(cluster.nodes);
  await settled();
});

const commands = () => registrations.filter((r) => r.type === "command:remote:Command");

const MARKERS = [SECRETS.token, SECRETS.certificateKey, "S3CR3T-KUBECONFIG-KEY", "S3CR3T-SSH-KEY"];

test("no secret value in any command's text (create, update, delete)", () => {
  // 41 before rollout batches: the two workers' own drains gone, two batches' drains and the last one's
  // uncordon added; 41 again since cp1's node-metadata reads the admin kubeconfig (no kubeconfig step).
  expect(commands().length).toBe(41);
  for (const r of commands()) {
    for (const field of ["create", "update", "delete"]) {
      const text = String(plain(r.inputs[field] ?? ""));
      for (const secret of MARKERS) expect({ resource: r.name, field, leaks: text.includes(secret) }).toEqual({ resource: r.name, field, leaks: false });
    }
  }
});

test("the admin kubeconfig output is secret and is the node's admin.conf", async () => {
  expect(await pulumi.isSecret(cluster.kubeconfig)).toBe(true);
  expect(await valueOf(cluster.kubeconfig)).toBe(SECRETS.kubeconfig);
});

test("the SSH private key reaches every connection as a secret", () => {
  for (const r of commands()) {
    const connection = r.inputs.connection as Record<string, unknown>;
    expect(isSecretInput(connection.privateKey) || isSecretInput(connection)).toBe(true);
    expect(JSON.stringify(plain(connection))).toContain("S3CR3T-SSH-KEY");
  }
});

test("join material goes to each join only on a secret stdin, and holds the fresh token", () => {
  for (const n of ["cp2", "cp3", "w1", "w2"]) {
    const join = commands().find((r) => r.name === `c-${n}-join`);
    expect(isSecretInput(join?.inputs.stdin)).toBe(true);
    const stdin = String(plain(join?.inputs.stdin));
    expect(stdin).toContain(`token: ${SECRETS.token}`);
    if (n.startsWith("cp")) expect(stdin).toContain(`certificateKey: ${SECRETS.certificateKey}`);
    else expect(stdin).not.toContain("certificateKey");
  }
});

test("steps whose output carries a secret are secret outputs and not logged; snapshots log stderr only; others log both", () => {
  for (const m of made) {
    const record = /^c-(init-node|members)$/.test(m.name);
    if (record) {
      // The component's records log nothing; their value is their stdin, and no triggers. Only the members
      // record runs a command (the node list on cp1).
      const commands = m.name === "c-members" ? ["create", "delete"] : [];
      expect({ name: m.name, commands: ["create", "update", "delete"].filter((k) => m.args[k] !== undefined), logging: m.args.logging, triggers: m.args.triggers }).toEqual({ name: m.name, commands, logging: "none", triggers: undefined });
      expect(typeof m.args.stdin).toBe("string");
      continue;
    }
    const secretStep = /-(join-token|join-material)$/.test(m.name);
    // The first control-plane node's node-metadata prints the admin kubeconfig: a secret stdout, its
    // stderr (kubectl's messages) logged.
    const kubeconfigStep = m.name === "c-cp1-node-metadata";
    const dataStep = /-(upgrade|cluster-config-read)$/.test(m.name);
    expect({ name: m.name, logging: m.args.logging }).toEqual({ name: m.name, logging: secretStep ? "none" : dataStep || kubeconfigStep ? "stderr" : "stdoutAndStderr" });
    expect({ name: m.name, aso: m.opts.additionalSecretOutputs ?? [] }).toEqual({ name: m.name, aso: secretStep ? ["stdout", "stderr"] : kubeconfigStep ? ["stdout"] : [] });
    expect(m.args.addPreviousOutputInEnv).toBe(false);
    expect(m.args.environment).toBeUndefined();
    // No node's step has triggers: nothing is replaced by a change, and no input holds the clock. A join
    // wave's and a rollout batch's steps (no delete) are replaced when their members change: their
    // triggers are the members (maxUnavailableWorkers 1: batch_1 is w1, batch_2 w2).
    const members = /^c-workers_1-/.test(m.name) ? ["w1", "w2"] : /^c-batch_1-/.test(m.name) ? ["w1"] : /^c-batch_2-/.test(m.name) ? ["w2"] : undefined;
    expect({ name: m.name, triggers: m.args.triggers, delete: members ? m.args.delete : undefined }).toEqual({ name: m.name, triggers: members, delete: undefined });
  }
});
