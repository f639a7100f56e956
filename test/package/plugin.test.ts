/**
 * The plugin as Pulumi starts it for `pulumi package add`: the Node.js language host runs @pulumi/pulumi's
 * run-plugin on the plugin folder, which loads its TypeScript entry, finds the exported components and
 * serves them over gRPC. Here run-plugin is started the same way (the language host itself cannot be
 * built here), and the engine's first call, GetSchema, is made over gRPC.
 */
import { spawn } from "child_process";
import * as path from "path";
import * as grpc from "@grpc/grpc-js";

const REPO = path.resolve(__dirname, "..", "..");
jest.setTimeout(900_000); // a guard against a hang, sized for a busy 2-core machine

/** Start run-plugin on plugin/, read the port it prints, call GetSchema, stop it. */
function schemaOverGrpc(): Promise<{ name: string; version: string; resources: Record<string, unknown> }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const provrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const provproto = require("@pulumi/pulumi/proto/provider_pb");
  const child = spawn(process.execPath, [require.resolve("@pulumi/pulumi/cmd/run-plugin"), "plugin"], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => reject(new Error(`run-plugin exited (${code}) before serving: ${out}${err}`)));
    child.stdout.on("data", (d) => {
      out += d;
      const port = /^(\d+)\s*$/m.exec(out)?.[1];
      if (port === undefined) return;
      const client = new provrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      client.getSchema(new provproto.GetSchemaRequest(), (e: Error | null, resp: { getSchema(): string }) => {
        child.removeAllListeners("exit");
        child.kill();
        if (e) reject(e);
        else resolve(JSON.parse(resp.getSchema()));
      });
    });
  });
}

test("run-plugin loads the plugin's TypeScript entry and serves the kubeadm schema over gRPC", async () => {
  const schema = await schemaOverGrpc();
  const version = (await import("../../package.json")).version;
  expect({ name: schema.name, version: schema.version, resources: Object.keys(schema.resources) }).toEqual({ name: "kubeadm", version, resources: ["kubeadm:index:Cluster"] });
});
