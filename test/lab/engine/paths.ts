/**
 * Where the lab finds the real Pulumi CLI (built by tools/install-pulumi.sh) and where it keeps a lab's
 * Pulumi files: `<labDir>/pulumi/{home,state,project}` (PULUMI_HOME with the lab's plugins, the local
 * file backend, the project folder holding Pulumi.yaml and the stack settings files).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { REPO_ROOT, labPaths } from "../nodes";

/** The installed @pulumi/pulumi version (the CLI is built at the same version). */
export const PULUMI_VERSION: string = require("@pulumi/pulumi/package.json").version;

/** The folder holding the `pulumi` binary that tools/install-pulumi.sh builds (same cache rule). */
export function pulumiBinDir(): string {
  const cache = process.env["PULUMI_KUBEADM_CACHE"] ?? path.join(os.homedir(), ".cache", "pulumi-kubeadm");
  return path.join(cache, "pulumi", `v${PULUMI_VERSION}`, "bin");
}

/**
 * The `pulumi` binary.
 * @throws Error naming the setup command when it has not been built.
 */
export function pulumiBinary(): string {
  const bin = path.join(pulumiBinDir(), "pulumi");
  if (!fs.existsSync(bin)) {
    throw new Error(`the Pulumi CLI v${PULUMI_VERSION} is not built (${bin} missing): run \`bash tools/install-pulumi.sh\` first`);
  }
  return bin;
}

/** A lab's Pulumi folders. */
export interface PulumiPaths {
  /** PULUMI_HOME: plugins, credentials (the local backend login). */
  home: string;
  /** The local file backend (`file://<state>`). */
  state: string;
  /** The project folder: Pulumi.yaml and Pulumi.<stack>.yaml. */
  project: string;
}

export function pulumiPaths(labDir: string): PulumiPaths {
  const root = labPaths(labDir).pulumiDir;
  return { home: path.join(root, "home"), state: path.join(root, "state"), project: path.join(root, "project") };
}

export { REPO_ROOT };
