/**
 * Log lines to the Pulumi engine, attached to a resource, as pulumi-command logs its commands' output
 * (they show under the resource in `pulumi up`, and in the Automation API's diagnostic events).
 */
import * as grpc from "@grpc/grpc-js";
import { EngineClient } from "@pulumi/pulumi/proto/engine_grpc_pb";
import { LogRequest, LogSeverity } from "@pulumi/pulumi/proto/engine_pb";
import { LogFn, Severity } from "./types";

const SEVERITY: Record<Severity, LogSeverity> = {
  debug: LogSeverity.DEBUG,
  info: LogSeverity.INFO,
  status: LogSeverity.INFO,
  warning: LogSeverity.WARNING,
  error: LogSeverity.ERROR,
};

/**
 * A function that makes a {@link LogFn} for a resource URN, sending to the engine at `address`
 * (the provider's first argument). Without an address the lines go to stderr, which the engine keeps
 * in its verbose log.
 */
export function engineLogger(address: string | undefined): (urn: string) => LogFn {
  const client = address ? new EngineClient(address, grpc.credentials.createInsecure()) : undefined;
  return (urn) => (severity, message) => {
    if (!client) {
      process.stderr.write(`${severity}: ${message}\n`);
      return;
    }
    const req = new LogRequest();
    req.setSeverity(SEVERITY[severity]);
    req.setMessage(message);
    req.setUrn(urn);
    req.setEphemeral(severity === "status");
    client.log(req, () => undefined);
  };
}
