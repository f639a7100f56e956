/**
 * A lab stack on the REAL Pulumi CLI and engine, through the Automation API (LocalWorkspace):
 *
 * - the local file backend `file://<labDir>/pulumi/state`, PULUMI_HOME `<labDir>/pulumi/home` (with the
 *   lab's stand-in command plugin installed, plugin.ts, and, for a stack whose component registers its
 *   kubernetes Provider, the real pulumi-kubernetes plugin), and the passphrase secrets provider with the
 *   lab's fixed passphrase `lab` (lab stacks only: it protects nothing of value);
 * - the project folder `<labDir>/pulumi/project`: Pulumi.yaml (the repo's own, with its config schema,
 *   so the CLI checks the stack's config as it would in the repository; only `main` is dropped and the
 *   lab's backend added) and the stack's settings file, written from the lab stack file on every call
 *   (so an edited stack file is what the next run uses), keeping the secrets provider's salt; secret
 *   values are set through `pulumi config set --secret` with the value on stdin (never in a command line),
 *   only when they changed (secrets.ts);
 * - the program: the root program's function (program.ts), run inline: the CLI talks to this
 *   process's language server, so no Node.js language host binary is needed.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { LocalWorkspace, PulumiCommand, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { DEFAULT_LAB_DIR } from "../nodes";
import { PULUMI_VERSION, REPO_ROOT, pulumiBinDir, pulumiBinary, pulumiPaths } from "./paths";
import { installCommandPlugin, installKubernetesPlugin } from "./plugin";
import { writeSettings } from "./secrets";
import { readLabStackFile } from "./stackfile";

/** The lab's passphrase for its stacks' secrets (lab only). */
export const LAB_PASSPHRASE = "lab";

export interface LabStackOptions {
  /** The lab stack file, `Pulumi.<stack>.yaml`. */
  stackFile: string;
  /** Default `$LAB_DIR`, else `<repo>/.lab`. */
  labDir?: string;
  /** Default: the root program (program.ts). */
  program?: PulumiFn;
}

export interface LabStack {
  stack: Stack;
  /** What the lab injected into the stack's config (no values). */
  injected: string[];
  labDir: string;
}

/** The repo's Pulumi.yaml, parsed. */
function repoProject(): { name: string; description?: string; runtime: unknown; config?: Record<string, unknown> } {
  return YAML.parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8"));
}

/** The repo's project name (Pulumi.yaml `name:`). */
export function projectName(): string {
  return repoProject().name;
}

/** The environment every lab CLI call gets. */
export function labEnv(labDir: string): Record<string, string> {
  const p = pulumiPaths(labDir);
  return {
    PULUMI_HOME: p.home,
    PULUMI_BACKEND_URL: `file://${p.state}`,
    PULUMI_CONFIG_PASSPHRASE: LAB_PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
    // Only the plugins installed in the lab's PULUMI_HOME: never a pulumi-resource-* found on PATH.
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
  };
}

/**
 * Selects (creating it the first time) the lab stack named by the stack file, with its settings
 * rewritten from that file.
 * @throws Error when the CLI is not built (names the setup command), on a badly named or unreadable
 *   stack file, or with the CLI's own message when it refuses.
 */
export async function labStack(o: LabStackOptions): Promise<LabStack> {
  const labDir = path.resolve(o.labDir ?? process.env["LAB_DIR"] ?? DEFAULT_LAB_DIR);
  const p = pulumiPaths(labDir);
  const repo = repoProject();
  const project = repo.name;
  // Read first: a stack file the lab cannot serve leaves nothing behind.
  const settings = readLabStackFile(o.stackFile, project, labDir);
  for (const d of [p.home, p.state, p.project]) fs.mkdirSync(d, { recursive: true });
  pulumiBinary();
  installCommandPlugin(p.home);
  // The component registers a kubernetes Provider unless told not to (`kubernetesProvider: false`).
  const provider = settings.config[`${project}:kubernetesProvider`] ?? settings.config["kubernetesProvider"];
  if (provider !== false && provider !== "false") installKubernetesPlugin(p.home);
  const program = o.program ?? (await import("../../../program")).clusterProgram;
  const pulumiCommand = await PulumiCommand.get({ root: path.dirname(pulumiBinDir()) });
  const stack = await LocalWorkspace.createOrSelectStack(
    { stackName: settings.stack, projectName: project, program },
    {
      workDir: p.project,
      pulumiHome: p.home,
      pulumiCommand,
      envVars: labEnv(labDir),
      secretsProvider: "passphrase",
      projectSettings: {
        name: project,
        runtime: "nodejs",
        ...(repo.description !== undefined ? { description: repo.description } : {}),
        backend: { url: `file://${p.state}` },
        ...(repo.config !== undefined ? { config: repo.config as never } : {}),
      },
    },
  );
  // The settings file: the stack file's config, the salt the CLI made at stack init, the secrets.
  const file = path.join(p.project, `Pulumi.${settings.stack}.yaml`);
  writeSettings(file, settings.stack, settings.config, settings.secrets, { binary: pulumiBinary(), cwd: p.project, env: { ...process.env, ...labEnv(labDir) } });
  return { stack, injected: settings.injected, labDir };
}

export { PULUMI_VERSION };

/**
 * `pulumi stack export` of a lab stack as the CLI writes it WITHOUT `--show-secrets` (the Automation
 * API's exportStack always shows them), parsed.
 * @throws Error with the CLI's message when the export fails.
 */
export function exportStackAsStored(labDir: string, stackName: string): unknown {
  const out = execFileSync(pulumiBinary(), ["stack", "export", "--stack", stackName], {
    cwd: pulumiPaths(labDir).project,
    env: { ...process.env, ...labEnv(labDir) },
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(out.toString("utf8"));
}

/**
 * One stack output as `pulumi stack output <key> --show-secrets` prints it (a secret revealed, one
 * trailing newline dropped): what a user reads, through the real CLI.
 * @throws Error with the CLI's output when it fails (no such stack or output).
 */
export function stackOutputRevealed(labDir: string, stackName: string, key: string): string {
  const out = execFileSync(pulumiBinary(), ["stack", "output", key, "--show-secrets", "--stack", stackName], {
    cwd: pulumiPaths(labDir).project,
    env: { ...process.env, ...labEnv(labDir) },
    maxBuffer: 16 * 1024 * 1024,
  });
  return out.toString("utf8").replace(/\n$/, "");
}
