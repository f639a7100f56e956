/**
 * lib.sh is installed once per node, content-addressed, by the node's prepare step from its stdin; every
 * command carries only its own script and loads the library by its hash.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "fs";
import { createHash } from "crypto";
import { gunzipSync, gzipSync } from "zlib";
import { join } from "path";
import { validateCluster } from "../../../components/kubeadm/validate";
import type { ClusterSpec } from "../../../components/kubeadm/types";
import { buildPlan, type Step } from "../../../components/plan/steps";
import type { StepContext } from "../../../components/steps/kind";
import { STEP_SETTINGS } from "../helpers/fixtures";
import { remoteCommand } from "../../../components/scripts/script";
import { libraryText, LIBRARY_FIRST_LINE, LIBRARY_PACKED, LIBRARY_SOURCE, LIBRARY_TEXT, LIBRARY_VALUES } from "../../../components/scripts/library";
import { runBash, sandbox } from "./bash";
import { scriptOf } from "../helpers/mocks";

const SPEC = {
  kubernetesVersion: "v1.34.2",
  controlPlaneEndpoint: "10.0.0.1:6443",
  nodes: [
    { name: "cp-1", role: "control-plane", host: "10.0.0.1", criSocket: "unix:///run/containerd/containerd.sock" },
    { name: "cp-2", role: "control-plane", host: "10.0.0.2" },
    { name: "w-1", role: "worker", host: "10.0.0.3", criSocket: "unix:///var/run/crio/crio.sock" },
    { name: "w-2", role: "worker", host: "10.0.0.4" },
  ],
} as unknown as ClusterSpec;

/** Every step's command texts (create, update, delete), as the component renders them, with the modules loaded afresh. */
function commandTexts(): { steps: Step[]; texts: Map<string, string[]>; sha: string; prepareStdin: string } {
  const mods = {
    validate: require("../../../components/kubeadm/validate") as typeof import("../../../components/kubeadm/validate"),
    plan: require("../../../components/plan/steps") as typeof import("../../../components/plan/steps"),
    script: require("../../../components/scripts/script") as typeof import("../../../components/scripts/script"),
    library: require("../../../components/scripts/library") as typeof import("../../../components/scripts/library"),
  };
  const cluster = mods.validate.validateCluster(SPEC);
  // Both workers in one rollout batch: its drain's and uncordon's texts name every member.
  const steps = mods.plan.buildPlan(cluster, { maxUnavailableWorkers: 2 });
  const texts = new Map<string, string[]>();
  for (const step of steps) {
    const node = cluster.nodes.find((n) => n.name === step.node);
    if (node === undefined) throw new Error(step.id);
    const ctx: StepContext = { cluster, node, step, settings: STEP_SETTINGS, owner: `c-${step.id}`, formerOwners: [], resourceName: (id) => `c-${id}`, formerResourceNames: () => [] };
    const s = step.kind.scripts(ctx, node.criSocket ?? "unix:///var/run/containerd/containerd.sock");
    texts.set(step.id, [s.create, s.update, s.delete].filter((t): t is string => t !== undefined).map((t) => mods.script.remoteCommand(t)));
  }
  const prepare = mods.plan.buildPlan(cluster, {}).find((s) => s.action === "prepare") as Step;
  const prepareStdin = prepare.kind.stdin?.render({} as StepContext, { endpoint: "", stdout: () => "", endpointOf: () => "" }) ?? "";
  return { steps, texts, sha: mods.library.LIBRARY_SHA256, prepareStdin };
}

/** The same, with lib.sh as `edit` makes it. */
function commandTextsWithLibrary(edit: (text: string) => string): ReturnType<typeof commandTexts> {
  let out: ReturnType<typeof commandTexts> | undefined;
  jest.isolateModules(() => {
    const fs = jest.requireActual("fs") as typeof import("fs");
    const real = fs.readFileSync;
    const spy = jest.spyOn(fs, "readFileSync").mockImplementation(((p: unknown, o?: unknown) => {
      const text = (real as (p: unknown, o?: unknown) => string | Buffer)(p, o);
      return String(p).endsWith("lib.sh") ? edit(String(text)) : text;
    }) as typeof fs.readFileSync);
    try {
      out = commandTexts();
    } finally {
      spy.mockRestore();
    }
  });
  return out as ReturnType<typeof commandTexts>;
}

test("only the prepare steps' stdin carries lib.sh; every command is bounded whatever lib.sh weighs, and names the library by its hash", () => {
  const lib = readFileSync(join(__dirname, "../../../components/scripts/lib.sh"), "utf8");
  const normal = commandTextsWithLibrary((t) => t);
  // lib.sh ten times bigger (no-op statements): the steps' commands other than prepare do not grow.
  const padded = commandTextsWithLibrary((t) => `${t}\n${": padding\n".repeat(lib.length)}`);
  expect(normal.sha).toBe(createHash("sha256").update(libraryText(lib)).digest("hex"));
  expect(padded.sha).not.toBe(normal.sha);
  const sizes = (r: ReturnType<typeof commandTexts>) => new Map([...r.texts].map(([id, t]) => [id, t.map((x) => x.length)]));
  const a = sizes(normal);
  const b = sizes(padded);
  // The packed library rides on prepare's stdin (hidden from the diff, never quoted in an error).
  expect(gunzipSync(Buffer.from(normal.prepareStdin.trim(), "base64")).toString("utf8")).toBe(libraryText(lib));
  expect(padded.prepareStdin.length).toBeGreaterThan(normal.prepareStdin.length);
  for (const step of normal.steps) {
    const texts = normal.texts.get(step.id) as string[];
    expect({ step: step.id, sizes: b.get(step.id) }).toEqual({ step: step.id, sizes: a.get(step.id) });
    // A rollout batch's drain and uncordon name their members (a list, membersWords, the messages): the
    // bound grows with them, 2 characters per character of a member's name and 16 per member, over the
    // 3500 of one node's step (the batch drain of w-1 and w-2 measured 3428 characters).
    const members = step.members ?? [];
    const bound = 3500 + 2 * members.reduce((n, m) => n + m.length, 0) + 16 * members.length;
    for (const t of texts) {
      expect({ step: step.id, bounded: t.length <= bound }).toEqual({ step: step.id, bounded: true });
      // The library's functions are not in the text, its hash is.
      expect(t).not.toContain("pk_fail() {");
      expect(t).toContain(`/var/lib/pulumi-kubeadm/lib/${normal.sha}.sh`);
    }
    // A new lib.sh changes every step's command text (they run again with it).
    expect((padded.texts.get(step.id) as string[])[0]).not.toBe(texts[0]);
  }
});

test("the node's library is lib.sh without its comments, after the values from TypeScript: bash defines the same functions and variables from both", () => {
  const box = sandbox();
  const source = join(box.dir, "source.sh");
  const installed = join(box.dir, "installed.sh");
  require("fs").writeFileSync(source, `${LIBRARY_VALUES.join("\n")}\n${LIBRARY_SOURCE}`);
  require("fs").writeFileSync(installed, LIBRARY_TEXT);
  // What bash holds after sourcing each in a clean environment: every function's body and every variable.
  const defined = (file: string): string => {
    const r = runBash(`. ${file}\ndeclare -f\ndeclare -p | grep -v -E '^declare [-a-zA-Z]+ (BASH[A-Z_]*|_|PIPESTATUS|FUNCNAME|SHLVL|PWD|OLDPWD|RANDOM|SECONDS|LINENO|EPOCH[A-Z]*|SRANDOM)='`);
    expect(r.stderr).toBe("");
    return r.stdout;
  };
  const fromSource = defined(source);
  expect(fromSource).toContain("pk_fail () ");
  expect(defined(installed)).toBe(fromSource);
  expect(LIBRARY_TEXT.split("\n")[0]).toBe(LIBRARY_FIRST_LINE);
  expect(fromSource).toContain(`declare -- PK_CRI_SOCKET_ANNOTATION="kubeadm.alpha.kubernetes.io/cri-socket"`);
  // No comment or blank line is left but the first.
  expect(LIBRARY_TEXT.split("\n").slice(1, -1).filter((l) => /^\s*(#|$)/.test(l))).toEqual([]);
  // What the state carries per node, twice (the prepare step's stdin): 10.9 KB packed with the step
  // bodies; 10.8 KB at 76f23db, the shared functions alone with their comments; lib.sh as written would
  // pack to 18 KB now. A budget, so that the library does not grow back unnoticed.
  expect(LIBRARY_PACKED.length).toBeLessThan(12 * 1024);
  expect(gzipSync(Buffer.from(LIBRARY_SOURCE)).length).toBeGreaterThan(1.5 * gzipSync(Buffer.from(LIBRARY_TEXT)).length);
  // No here-document in lib.sh, where a line starting with # would be text, not a comment.
  expect(LIBRARY_SOURCE).not.toMatch(/<<-?\s*['"]?[A-Za-z_]/);
});

test("lib.sh names the paths and line prefixes the TypeScript side writes for it", () => {
  const { CONFIG_DIR, VALID_UNTIL_PREFIX, VERSION_PREFIX } = require("../../../components/scripts/kubeadmRun") as typeof import("../../../components/scripts/kubeadmRun");
  const { KUBELET_JOURNAL_DIR } = require("../../../components/steps/kubelet") as typeof import("../../../components/steps/kubelet");
  expect(LIBRARY_TEXT).toContain(`file=${CONFIG_DIR}/kubeadm-$action.yaml`);
  expect(LIBRARY_TEXT).toContain(`rm -rf "$PK_STATE_DIR/run/$1" "$PK_STATE_DIR/version" ${CONFIG_DIR}\n`);
  expect(LIBRARY_TEXT).toContain(`'1s/^${VALID_UNTIL_PREFIX}\\([0-9]*\\).*$/\\1/p'`);
  expect(LIBRARY_TEXT).toContain(`'s/^${VERSION_PREFIX}\\(v[0-9.]*\\)$/\\1/p'`);
  expect(LIBRARY_TEXT).toContain(`own="$PK_STATE_DIR"/${KUBELET_JOURNAL_DIR}\n`);
  const { MEMBERS_FILE } = require("../../../components/scripts/members") as typeof import("../../../components/scripts/members");
  expect(LIBRARY_TEXT).toContain(`grep -qxF -- "$1" ${MEMBERS_FILE}; then`);
  // pk_node_registered's destroy exception reads the same file (no list: the whole cluster is destroyed).
  expect(LIBRARY_TEXT).toContain(`[ "\${2:-}" = removal ] && [ ! -f ${MEMBERS_FILE} ]`);
});

test("a change of lib.sh's comments alone changes no step's command text (no step runs again for it)", () => {
  const normal = commandTextsWithLibrary((t) => t);
  const reworded = commandTextsWithLibrary((t) => t.replace(/^# /gm, "# reworded: "));
  expect(reworded.sha).toBe(normal.sha);
  expect([...reworded.texts]).toEqual([...normal.texts]);
});

/** Every step's ancestors in the plan (the steps it runs after, transitively). */
function ancestors(steps: Step[]): Map<string, Set<string>> {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const memo = new Map<string, Set<string>>();
  const of = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known) return known;
    const set = new Set<string>();
    for (const a of byId.get(id)?.after ?? []) {
      set.add(a);
      for (const x of of(a)) set.add(x);
    }
    memo.set(id, set);
    return set;
  };
  for (const s of steps) of(s.id);
  return memo;
}

test("every step runs after the prepare step of the node it runs on (which installs the library there)", () => {
  const cluster = validateCluster(SPEC);
  for (const steps of [buildPlan(cluster, {}), buildPlan(cluster, { maxConcurrentJoins: 1, maxUnavailableWorkers: 2 })]) {
    const up = ancestors(steps);
    for (const s of steps) {
      if (s.action === "prepare") continue;
      expect({ step: s.id, afterPrepare: up.get(s.id)?.has(`${s.runsOn}-prepare`) }).toEqual({ step: s.id, afterPrepare: true });
    }
  }
});

function prepareCreate(): string {
  return commandTexts().texts.get("w-1-prepare")?.[0] as string;
}

test("prepare installs the library atomically at its content-addressed path (0600), and a later step loads it from there", () => {
  const box = sandbox();
  const { sha } = commandTexts();
  const lib = join(box.state, "lib", `${sha}.sh`);
  // kubeadm missing: prepare fails after the install, which is its first action.
  const stdin = commandTexts().prepareStdin;
  // Without the packed library on stdin there is nothing to install: it fails naming the node, installs nothing.
  const empty = runBash(scriptOf(prepareCreate()), { state: box.state, lib, bin: box.bin, wrap: ["env", "PATH=/usr/bin:/bin"] });
  expect(empty.stderr).toContain("pulumi-kubeadm: node w-1: could not unpack the shell library from stdin");
  expect(existsSync(lib)).toBe(false);
  // kubeadm missing: prepare fails after the install, which is its first action.
  const r = runBash(scriptOf(prepareCreate()), { state: box.state, lib, bin: box.bin, wrap: ["env", "PATH=/usr/bin:/bin"], stdin });
  expect(r.stderr).toContain("pulumi-kubeadm: node w-1: kubeadm is not installed");
  expect(createHash("sha256").update(readFileSync(lib)).digest("hex")).toBe(sha);
  expect(statSync(lib).mode & 0o777).toBe(0o600);
  expect(readdirSync(join(box.state, "lib"))).toEqual([`${sha}.sh`]);

  // A damaged library is installed again.
  require("fs").writeFileSync(lib, "broken\n");
  runBash(scriptOf(prepareCreate()), { state: box.state, lib, bin: box.bin, wrap: ["env", "PATH=/usr/bin:/bin"], stdin });
  expect(createHash("sha256").update(readFileSync(lib)).digest("hex")).toBe(sha);

  // The first control-plane node's node-metadata, which prints the admin kubeconfig, checks for it first.
  const metadata = commandTexts().texts.get("cp-1-node-metadata")?.[0] as string;
  const later = runBash(scriptOf(metadata), { state: box.state, lib, bin: box.bin });
  // pk_fail comes from the loaded library.
  expect(later.stderr).toBe("pulumi-kubeadm: node cp-1: no /etc/kubernetes/admin.conf: kubeadm init has not run\n");
});

test("a step that finds no library fails before doing anything, naming the node, the file and what to do", () => {
  const box = sandbox();
  const { sha, texts } = commandTexts();
  const lib = join(box.state, "lib", `${sha}.sh`);
  box.stub("kubectl", `touch ${join(box.dir, "ran")}`);
  const r = runBash(scriptOf((texts.get("w-1-node-metadata") as string[])[0] as string), { state: box.state, lib, bin: box.bin, stdin: "unix:///var/run/crio/crio.sock\n" });
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^pulumi-kubeadm: node w-1: ${lib.replace(/[.]/g, "\\.")} missing on \\S+, nothing changed: pulumi up --replace '<URN of <cluster>-<the node this step runs on>-prepare>' installs it again and finishes the work\n$`));
  expect(existsSync(join(box.dir, "ran"))).toBe(false);
});
