/** Layer 1, kubeadm knowledge: pure functions, no Pulumi, no I/O. */
export * from "./types";
export * from "./version";
export * from "./gates";
export * from "./criSocket";
export * from "./instanceConfig";
export * from "./kubeletConfig";
export * from "./flagsEnv";
export * from "./clusterConfig";
export * from "./kubeadmConfig";
export * from "./validate";
export { FileEditError, goYamlKeyLess } from "./yamlEdit";
export { durationSeconds } from "./duration";
