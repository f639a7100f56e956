/** The benchmark's cluster: 3 control-plane nodes + 20 workers, provisioned at v1.33.2. */
import type { BenchCluster } from "./lab";

export const CLUSTER: BenchCluster = { controlPlanes: 3, workers: 20, version: "v1.33.2" };
