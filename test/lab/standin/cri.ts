/**
 * TEST DOUBLE (lab stand-in, not real kubeadm): CRI endpoint normalisation and detection as
 * kubeadm-facts.md describes them.
 */
import * as fs from "fs";
import { p } from "./common";

/** kubeadm's probe list, in order. */
export const KNOWN_ENDPOINTS = [
  "unix:///var/run/containerd/containerd.sock",
  "unix:///var/run/crio/crio.sock",
  "unix:///var/run/cri-dockerd.sock",
];

/**
 * A criSocket without a scheme gets `unix://` prepended, with kubeadm's warning (text verified in
 * kubeadm output: `initconfiguration.go:120] Usage of CRI endpoints without URL scheme ...`).
 */
export function normaliseCriSocket(value: string, warn: (line: string) => void): string {
  if (value.includes("://")) return value;
  warn(
    `Usage of CRI endpoints without URL scheme is deprecated and can cause kubelet errors in the future. ` +
      `Automatically prepending scheme "unix" to the "criSocket" with value ${JSON.stringify(value)}. Please update your configuration!`,
  );
  return `unix://${value}`;
}

/** The filesystem path of a unix:// endpoint, or undefined for other schemes. */
export function socketPath(endpoint: string): string | undefined {
  return endpoint.startsWith("unix://") ? endpoint.slice("unix://".length) : undefined;
}

/** Whether a listening socket (any file of socket type) exists at the endpoint on this node. */
export function socketExists(endpoint: string): boolean {
  const sp = socketPath(endpoint);
  if (!sp) return false;
  const candidates = [sp];
  if (sp.startsWith("/var/run/")) candidates.push(sp.replace(/^\/var\/run\//, "/run/"));
  return candidates.some((c) => {
    try {
      return fs.statSync(p(c)).isSocket();
    } catch {
      return false;
    }
  });
}

export type Detection = { endpoint: string } | { error: string };

/**
 * kubeadm's detection: the one known socket found; none found falls back to containerd (preflight
 * fails later); several found is an error (text verified in kubeadm output, lower-case `found` in
 * current releases).
 */
export function detectCriSocket(): Detection {
  const found = KNOWN_ENDPOINTS.filter(socketExists);
  if (found.length > 1) {
    return {
      error:
        "found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' " +
        `field in the kubeadm configuration file: ${found.join(", ")}`,
    };
  }
  return { endpoint: found[0] ?? KNOWN_ENDPOINTS[0] };
}

/**
 * The preflight CRI check's error when nothing listens at the endpoint.
 * UNVERIFIED wording (kubeadm wraps the CRI client's dial error).
 */
export function criPreflightError(endpoint: string): string {
  const sp = socketPath(endpoint) ?? endpoint;
  return (
    `could not connect to the container runtime: validate service connection: validate CRI v1 runtime API for endpoint ${JSON.stringify(endpoint)}: ` +
    `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix ${sp}: connect: no such file or directory"`
  );
}
