/** The lab nodes' programmatic API, for end-to-end tests and the benchmark. */
export { startLab, stopLab, readLab, healthyNodes, labProcesses, DEFAULT_CONFIG } from "./lab";
export type { LabInfo, StartLabOptions, StopLabResult } from "./lab";
export { startNodeSshd, stopNodeSshd } from "./node";
export type { StopSshdOptions } from "./node";
export { runOnNode, sshArgs, knownHostsLine, writeKnownHosts } from "./ssh";
export type { RunOptions, RunResult } from "./ssh";
export { readNodeFile } from "./nodefile";
export type { NodeInfo } from "./nodefile";
export { labSpecForCount, parseRuntimes, parseUpArgs } from "./args";
export { readStackFile, labSpecFromStackText } from "./stackfile";
export { DEFAULT_VERSION, RUNTIMES, RUNTIME_SOCKETS, canonicalVersion, runtimeOfCriSocket } from "./spec";
export type { LabSpec, NodeSpec, Runtime } from "./spec";
export { DEFAULT_LAB_DIR, REPO_ROOT, hostPathOf, labPaths, nodePaths } from "./paths";
export { ACCEPTED, STARTING, countLines, countSince, logOffsets } from "./sshdlog";
export type { LogCounts } from "./sshdlog";
