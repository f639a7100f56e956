/** `npm run lab -- up|down|ssh`: thin commands over the lab API (lab.ts, node.ts, ssh.ts). */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { parseUpArgs } from "./args";
import { startLab, stopLab } from "./lab";
import { readNodeFile } from "./nodefile";
import { DEFAULT_LAB_DIR } from "./paths";
import { sshArgs } from "./ssh";

/** `LAB_DIR` in the environment moves the lab (default `<repo>/.lab`). */
function labDir(): string {
  return path.resolve(process.env.LAB_DIR ?? DEFAULT_LAB_DIR);
}

export async function up(args: string[]): Promise<number> {
  const started = Date.now();
  const { spec, fresh } = parseUpArgs(args);
  const lab = await startLab({ spec, labDir: labDir(), ifRunning: fresh ? "replace" : "reuse" });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(
    lab.reused
      ? `lab: reusing the running lab in ${lab.labDir} (same nodes); \`down\` or \`up --fresh\` to start anew\n`
      : `lab: ${lab.nodes.length} node(s) up in ${secs} s, kubeadm ${lab.version}, files in ${lab.labDir}\n`,
  );
  for (const n of lab.nodes) {
    process.stdout.write(`  ${n.name.padEnd(16)} ${`${n.address}:${n.port}`.padEnd(16)} ${n.runtimes.join("+") || "(no runtime)"}\n`);
  }
  return 0;
}

export async function down(args: string[]): Promise<number> {
  if (args.length > 0) throw new Error(`down takes no arguments, got ${args.join(" ")}`);
  const dir = labDir();
  const { stopped } = await stopLab({ labDir: dir });
  process.stdout.write(`lab: stopped ${stopped.length} process(es), removed ${dir}\n`);
  return 0;
}

export async function ssh(args: string[]): Promise<number> {
  const [name, ...command] = args;
  if (!name) throw new Error("usage: ssh <node> [command...]");
  const dir = labDir();
  let node;
  try {
    node = readNodeFile(dir, name);
  } catch {
    throw new Error(`no node ${name} in ${dir} (is the lab up?)`);
  }
  const tty = command.length === 0 && process.stdin.isTTY ? ["-t"] : [];
  const argv = [...tty, ...sshArgs(dir, node), ...(command.length > 0 ? ["--", command.join(" ")] : [])];
  return new Promise<number>((resolve, reject) => {
    const child = spawn("ssh", argv, { stdio: "inherit" });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve(code ?? (signal ? 255 : 1)));
  });
}
