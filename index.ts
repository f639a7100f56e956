/**
 * The root program that `pulumi up` runs: the stack's outputs are what {@link clusterProgram} returns
 * (kubeconfig, nodes, plan, kubernetesVersion). See program.ts.
 */
import { clusterProgram } from "./program";

export = clusterProgram;
