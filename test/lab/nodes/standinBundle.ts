/**
 * Bundles the stand-ins (test/lab/standin/{kubeadm,kubectl,systemctl,kubeletcli}.ts with what they import) into one
 * plain JavaScript file each with esbuild, so a call on a node is `node <file>.js`: about 0.1 s, where a
 * tsx process per call took 0.4 to 0.7 s on 2 cores (see README, Performance).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { REPO_ROOT } from "./paths";
import { STANDIN_COMMANDS, standinBundleDir, standinScript } from "./wrappers";

/**
 * Builds `<labDir>/standin/<command>.js` from the current sources (about 0.1 s). Each file is replaced
 * by a rename, so a call running on a node meanwhile reads either the old bundle or the new one.
 * @throws Error with esbuild's messages when a stand-in does not build.
 */
export function buildStandins(labDir: string, repoRoot = REPO_ROOT): string {
  const out = standinBundleDir(labDir);
  const tmp = `${out}.build-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    buildSync({
      // Named by command: the output is `<command>.js` even where the source file is named otherwise.
      entryPoints: Object.fromEntries(STANDIN_COMMANDS.map((c) => [c, standinScript(c, repoRoot)])),
      absWorkingDir: repoRoot,
      outdir: tmp,
      bundle: true,
      platform: "node",
      format: "cjs",
      target: `node${process.versions.node.split(".")[0]}`,
      logLevel: "silent",
    });
    fs.mkdirSync(out, { recursive: true });
    for (const c of STANDIN_COMMANDS) fs.renameSync(path.join(tmp, `${c}.js`), path.join(out, `${c}.js`));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return out;
}
