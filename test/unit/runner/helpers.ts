/** Shared helpers of the runner's unit tests: a temp workspace with a stack file, and a fake executor. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { ExecRequest, ExecResult, Executor } from "../../lab/runner/types";

export const FIXTURE = path.resolve(__dirname, "../../lab/runner/fixtures/index.ts");
export const PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEKEYMATERIALxyzzy0123456789\n-----END OPENSSH PRIVATE KEY-----\n";
export const TOKEN = "tok-very-secret-7781";

export interface Workspace {
  dir: string;
  stackFile: string;
  statePath: string;
  labDir: string;
  writeStack(config: Record<string, unknown>): void;
}

export function workspace(): Workspace {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "runner-test-"));
  const stackFile = path.join(dir, "Pulumi.dev.yaml");
  const ws: Workspace = {
    dir,
    stackFile,
    statePath: path.join(dir, "state", "dev.json"),
    labDir: path.join(dir, "lab"),
    writeStack(config) {
      fs.writeFileSync(stackFile, YAML.stringify({ config }));
    },
  };
  return ws;
}

export function baseConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "kubeadm:nodes": [{ name: "n1", host: "127.0.0.9" }],
    "kubeadm:sshPrivateKey": PRIVATE_KEY,
    "kubeadm:token": TOKEN,
    ...extra,
  };
}

export interface FakeCall extends Omit<ExecRequest, "onOutput"> {}

/** Echoes like the fixture's commands would: `read t; echo "got X and $t"` prints the stdin. */
export function fakeExecutor(opts: { fail?: (req: ExecRequest) => boolean } = {}): { exec: Executor; calls: FakeCall[] } {
  const calls: FakeCall[] = [];
  const exec: Executor = async (req) => {
    const { onOutput, ...rest } = req;
    calls.push(rest);
    await new Promise((r) => setTimeout(r, 2));
    let out: string;
    const m = /^read t; echo "got (.*) and \$t"$/.exec(req.command);
    if (m) out = `got ${m[1]} and ${req.stdin?.trim() ?? ""}\n`;
    else if (req.command.startsWith("echo ")) out = req.command.slice(5).replace("$(hostname)", "fakehost") + "\n";
    else out = `ran ${req.command}\n`;
    onOutput?.("stdout", out);
    if (opts.fail?.(req)) {
      onOutput?.("stderr", "boom\n");
      const r: ExecResult = { kind: "exited", exitCode: 3, stdout: out, stderr: "boom\n", combined: out + "boom\n" };
      return r;
    }
    return { kind: "exited", exitCode: 0, stdout: out, stderr: "", combined: out };
  };
  return { exec, calls };
}
