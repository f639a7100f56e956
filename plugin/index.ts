/**
 * The entry of the package's Pulumi plugin (PulumiPlugin.yaml): the components it serves to every
 * Pulumi language. Only component classes are exported here: the plugin host serves each exported
 * ComponentResource, and schema inference starts from this file.
 */
export { Cluster } from "../components/cluster/cluster";
