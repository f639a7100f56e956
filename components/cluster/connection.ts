/**
 * SSH connections for pulumi-command, one per node, with the cluster's SSH defaults applied and the
 * private keys marked secret.
 */
import * as pulumi from "@pulumi/pulumi";
import type * as inputs from "@pulumi/command/types/input";
import type { NodeArgs, SshDefaults } from "./args";

/** A private key as a secret Output (undefined stays undefined). */
export function secretOrUndefined(value: pulumi.Input<string> | undefined): pulumi.Output<string> | undefined {
  return value === undefined ? undefined : pulumi.secret(value);
}

/**
 * The `connection` of every command that runs on `node`: host, port (node, else defaults, else 22),
 * user (node, else defaults, else root), private key (secret), pinned host key, bastion.
 * @param defaultKey the defaults' private key made secret, given when one Output serves every node
 *   (each `pulumi.secret` of an Output costs the SDK a few more).
 */
export function nodeConnection(
  node: NodeArgs,
  ssh: SshDefaults | undefined,
  defaultKey: pulumi.Output<string> | undefined = secretOrUndefined(ssh?.privateKey),
): inputs.remote.ConnectionArgs {
  const privateKey = node.privateKey != null ? secretOrUndefined(node.privateKey) : defaultKey;
  const user = node.user ?? ssh?.user ?? "root";
  const connection: inputs.remote.ConnectionArgs = {
    host: node.host,
    port: node.port ?? ssh?.port ?? 22,
    user,
    ...(privateKey !== undefined ? { privateKey } : {}),
    ...(node.hostKey !== undefined ? { hostKey: node.hostKey } : {}),
  };
  if (node.proxy !== undefined) {
    const p = node.proxy;
    const proxyKey = secretOrUndefined(p.privateKey) ?? privateKey;
    connection.proxy = {
      host: p.host,
      port: p.port ?? 22,
      user: p.user ?? user,
      ...(proxyKey !== undefined ? { privateKey: proxyKey } : {}),
      ...(p.hostKey !== undefined ? { hostKey: p.hostKey } : {}),
    };
  }
  return connection;
}
