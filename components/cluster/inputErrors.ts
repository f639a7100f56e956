/**
 * Bad args reach every Pulumi language as property errors: a {@link KubeadmConfigError} of the
 * validation (which names the node and the field) becomes Pulumi's `InputPropertiesError`, whose
 * property path (`nodes[1].criSocket`, `controlPlaneEndpoint`, `featureGates.NodeLocalCRISocket`) the
 * engine shows against the caller's own argument, in TypeScript as in a Python or Go program (the
 * plugin's provider host sends it as gRPC InvalidArgument details).
 */
import * as pulumi from "@pulumi/pulumi";
import { KubeadmConfigError } from "../kubeadm/types";

/**
 * The property path of a validation error: the field itself for a cluster-wide field, else
 * `nodes[<i>].<field>`, `i` being the node's place in `nodes` (for a duplicate name, the later entry).
 * @param nodes the `nodes` arg as given.
 */
export function propertyPath(e: KubeadmConfigError, nodes: unknown): string {
  if (e.node === undefined) return e.field;
  const places = (Array.isArray(nodes) ? nodes : []).flatMap((n: unknown, i) =>
    n !== null && typeof n === "object" && (n as { name?: unknown }).name === e.node ? [i] : [],
  );
  const i = e.field === "name" ? places[places.length - 1] : places[0];
  return i === undefined ? e.field : `nodes[${i}].${e.field}`;
}

/**
 * Run `check` (validation of the args); a KubeadmConfigError it throws is thrown again as an
 * `InputPropertiesError` with the same message and one property error (path and reason). Other errors
 * pass unchanged.
 * @param nodes the `nodes` arg as given, for the path.
 * @throws pulumi.InputPropertiesError for bad args.
 */
export function asInputErrors<T>(nodes: unknown, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof KubeadmConfigError)) throw e;
    throw new pulumi.InputPropertiesError({ message: e.message, errors: [{ propertyPath: propertyPath(e, nodes), reason: e.problem }] });
  }
}
