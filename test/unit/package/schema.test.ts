/**
 * The package's Pulumi plugin (plugin/): the schema Pulumi infers from the TypeScript source, the way
 * `pulumi package add` reads it before generating an SDK for another language. The inferred schema is
 * compared with schema.json beside this file, reviewed by hand: a change to the args interface, the
 * outputs or their docstrings shows up here, and the file is updated on purpose.
 */
import * as fs from "fs";
import * as path from "path";
import { ComponentProvider } from "@pulumi/pulumi/provider/experimental";
import { Cluster } from "../../../components";

const REPO = path.resolve(__dirname, "..", "..", "..");
const PLUGIN = path.join(REPO, "plugin");
jest.setTimeout(120_000);

type Schema = {
  name: string;
  version: string;
  resources: Record<string, { inputProperties: Record<string, unknown>; properties: Record<string, unknown>; requiredInputs: string[] }>;
  types: Record<string, { type: string; enum?: Array<{ name: string; value: string }>; properties?: Record<string, unknown> }>;
  dependencies?: unknown[];
};

let schema: Schema;
beforeAll(async () => {
  // The provider's name is what the Node.js plugin host takes from the plugin's package.json.
  const pluginPackage = JSON.parse(fs.readFileSync(path.join(PLUGIN, "package.json"), "utf8")) as { name: string };
  const provider = new ComponentProvider({ name: pluginPackage.name, components: [Cluster], dirname: PLUGIN });
  schema = JSON.parse(await provider.getSchema()) as Schema;
});

test("the inferred schema is the reviewed one (test/unit/package/schema.json)", () => {
  const reviewed = JSON.parse(fs.readFileSync(path.join(__dirname, "schema.json"), "utf8")) as Schema;
  expect(schema).toEqual(reviewed);
});

test("package name and type token agree: kubeadm:index:Cluster, at the npm package's version, no other package needed", () => {
  const rootPackage = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as { version: string };
  expect(Object.keys(schema.resources)).toEqual(["kubeadm:index:Cluster"]);
  expect({ name: schema.name, version: schema.version }).toEqual({ name: "kubeadm", version: rootPackage.version });
  expect(schema.dependencies).toEqual([]);
  expect(fs.readFileSync(path.join(PLUGIN, "PulumiPlugin.yaml"), "utf8")).toMatch(/^runtime: nodejs$/m);
});

test("role and taint effect are enums of the strings stack config already uses; no type name that codegen would suffix twice", () => {
  const values = (t: string) => schema.types[`kubeadm:index:${t}`]?.enum?.map((e) => e.value);
  expect(values("NodeRole")).toEqual(["control-plane", "worker"]);
  expect(values("TaintEffect")).toEqual(["NoSchedule", "PreferNoSchedule", "NoExecute"]);
  expect(Object.keys(schema.types).filter((t) => t.endsWith("Args"))).toEqual([]);
  const cluster = schema.resources["kubeadm:index:Cluster"]!;
  expect(cluster.requiredInputs).toEqual(["kubernetesVersion", "nodes"]);
  expect(Object.keys(cluster.properties).sort()).toEqual(["kubeconfig", "kubernetesVersion", "nodes", "plan"]);
});
