/**
 * Hostile strings never reach a shell unquoted: shellQuote round-trips through real bash, and a script
 * rendered with hostile values prints them as data and runs none of them.
 */
import { existsSync } from "fs";
import { join } from "path";
import { shellQuote } from "../../../components/scripts/quote";
import { remoteCommand, renderScript } from "../../../components/scripts/script";
import { nodeMetadataScripts } from "../../../components/steps/nodeMetadata";
import { runBash, sandbox, withLibrary } from "./bash";
import { spawnSync } from "child_process";

const box = sandbox();
const marker = join(box.dir, "pwned");
const HOSTILE = [
  `$(touch ${marker})`,
  "`touch " + marker + "`",
  `'; touch ${marker}; echo '`,
  `"; touch ${marker}; echo "`,
  `a\nb; touch ${marker}`,
  `\\'"$HOME"\\`,
  "",
  "${IFS}touch${IFS}" + marker,
];

test.each(HOSTILE)("shellQuote(%j) is read back byte for byte by bash, and runs nothing", (value) => {
  const r = spawnSync("bash", ["-c", `printf '%s' ${shellQuote(value)}`], { encoding: "utf8" });
  expect(r.stdout).toBe(value);
  expect(existsSync(marker)).toBe(false);
});

test("shellQuote refuses NUL", () => {
  expect(() => shellQuote("a\0b")).toThrow(/NUL/);
});

test("a hostile node name and labels reach kubectl as single arguments through remoteCommand", () => {
  const args = join(box.dir, "args");
  box.stub("kubectl", `for a in "$@"; do printf "[%s]\\n" "$a"; done >>${args}`);
  const evil = HOSTILE[0] as string;
  const scripts = nodeMetadataScripts({ node: evil, labels: { tier: evil, "x/y": HOSTILE[2] as string }, nodeLocalCriSocket: true, version: "v1.34.2", drainTimeoutSeconds: 5, drainOnDelete: true, scope: "x-node-metadata", owner: "c-x-node-metadata" });
  const script = withLibrary(scripts.create).replace(/^PK_STATE_DIR=.*$/m, `PK_STATE_DIR=${box.state}`);
  const r = spawnSync("bash", ["-c", remoteCommand(script)], { encoding: "utf8", env: { ...process.env, PATH: `${box.bin}:${process.env.PATH}` } });
  expect(r.status).toBe(0);
  expect(existsSync(marker)).toBe(false);
  const seen = require("fs").readFileSync(args, "utf8") as string;
  expect(seen).toContain(`[${evil}]`);
  expect(seen).toContain(`[tier=${evil}]`);
  expect(seen).toContain(`[x/y=${HOSTILE[2]}]`);
});

test("renderScript prints a hostile node name as data in its messages", () => {
  const script = renderScript(`$(touch ${marker})`, ["pk_fail boom"]);
  const r = runBash(script, { state: box.state });
  expect(r.status).toBe(1);
  expect(r.stderr).toBe(`pulumi-kubeadm: node $(touch ${marker}): boom\n`);
  expect(existsSync(marker)).toBe(false);
});
