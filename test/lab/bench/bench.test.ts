/** The benchmark's pure parts: statistics, options, the floor's commands, step kinds, session figures. No time asserted. */
import { execFileSync } from "child_process";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { median, pairedRatios, summarize } from "./stats";
import { parseOptions, SCENARIOS } from "./options";
import { batches, initCommand, joinCommand, parseInitOutput, redacted, sideBySide, upgradeNodeCommand } from "./floor";
import { kindOf, startAndTail, stepKinds, timeline } from "./steps";
import { PROVISION_DURATIONS, UPGRADE_DURATIONS, benchDurations, countKubeadmRuns, scaledDurations } from "./cluster";
import { engineEdges, sessionFigures, stateSetup } from "./result";
import { addressOf, assertLabInstalls, fitsBenchLab, nodeNames, stackStateFile } from "./lab";
import { LAB_INSTALLS } from "../e2e/helpers";
import type { StepRecord } from "../engine/run";

test("median, spread and paired ratios", () => {
  expect(median([3, 1, 2])).toBe(2);
  expect(median([4, 1, 3, 2])).toBe(2.5);
  expect(() => median([])).toThrow(/no values/);
  expect(summarize([10, 12, 11])).toEqual({ median: 11, min: 10, max: 12, spread_pct: 18.2, runs: [10, 12, 11] });
  // Each run's ratio is taken against the floor of the same run.
  expect(pairedRatios([20, 30, 22], [10, 10, 11]).runs).toEqual([2, 3, 2]);
  expect(pairedRatios([20, 30, 22], [10, 10, 11]).median).toBe(2);
  expect(() => pairedRatios([1, 2], [1])).toThrow(/2 component runs but 1 floor runs/);
  expect(() => pairedRatios([1], [0])).toThrow(/floor of run 1 is 0/);
});

test("options: every scenario by default; --only, --runs, --standin, --parallel, --joins, --durations-scale; bad values refused", () => {
  expect(parseOptions([])).toMatchObject({ json: false, only: [...SCENARIOS], runs: 3, evalSizes: [10, 100, 1000], evalArgs: "config", workers: 20, standin: "bundle", durationsScale: 1 });
  expect(parseOptions(["--durations-scale", "5"]).durationsScale).toBe(5);
  expect(() => parseOptions(["--durations-scale", "0.5"])).toThrow(/--durations-scale: "0.5" is not a positive integer/);
  expect(parseOptions(["--eval-args", "output"]).evalArgs).toBe("output");
  expect(() => parseOptions(["--eval-args", "yaml"])).toThrow(/not config or output/);
  expect(parseOptions(["--json", "--only", "eval", "--runs=5", "--standin", "tsx", "--parallel", "32", "--joins", "20"])).toMatchObject({
    json: true,
    only: ["eval"],
    runs: 5,
    standin: "tsx",
    parallel: 32,
    joins: 20,
  });
  expect(parseOptions([]).joins).toBeUndefined();
  expect(() => parseOptions(["--joins", "0"])).toThrow(/--joins: "0" is not a positive integer/);
  expect(() => parseOptions(["--only", "fast"])).toThrow(/unknown scenario "fast"/);
  expect(() => parseOptions(["--runs", "0"])).toThrow(/--runs: "0" is not a positive integer/);
  expect(() => parseOptions(["--standin", "go"])).toThrow(/not bundle or tsx/);
});

test("--durations-scale multiplies every stand-in duration of both phases, and no other key appears", () => {
  expect(scaledDurations(PROVISION_DURATIONS, 5)).toEqual({ init: 20, join: 10 });
  expect(scaledDurations(UPGRADE_DURATIONS, 5)).toEqual({ upgradeApply: 15, upgradeNode: 10, drain: 5 });
  expect(scaledDurations(UPGRADE_DURATIONS, 1)).toEqual(UPGRADE_DURATIONS);
  // What runRepetition gives the stand-ins on both sides and what the JSON's setup reports: one helper.
  expect(benchDurations(parseOptions(["--durations-scale", "3"]))).toEqual({ provision: { init: 12, join: 6 }, upgrade: { upgradeApply: 9, upgradeNode: 6, drain: 3 } });
  expect(benchDurations(parseOptions([]))).toEqual({ provision: PROVISION_DURATIONS, upgrade: UPGRADE_DURATIONS });
});

test("the floor: join material from kubeadm init's output, batches, side-by-side bash, the per-node upgrade", () => {
  const hash = `sha256:${"a".repeat(64)}`;
  const key = "b".repeat(64);
  const out = `You can now join any number of control-plane nodes ...\n\n  kubeadm join 127.0.0.150:6443 --token abcdef.0123456789abcdef \\\n\t--discovery-token-ca-cert-hash ${hash} \\\n\t--control-plane --certificate-key ${key}\n`;
  expect(parseInitOutput(out)).toEqual({ token: "abcdef.0123456789abcdef", caCertHash: hash, certificateKey: key });
  expect(() => parseInitOutput("[init] done\n")).toThrow(/no join command/);
  // Output missing a piece: the message names it and holds none of the output (the token, the hash).
  let message = "";
  try {
    parseInitOutput(out.replace(/--certificate-key \S+/g, ""));
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toMatch(/no join command with --certificate-key \(/);
  expect(message).not.toContain("abcdef.0123456789abcdef");
  expect(message).not.toContain(hash);
  // The operator's words, shared by the floor over SSH and the floor through the engine (engineFloor.ts).
  const sock = "unix:///run/containerd/containerd.sock";
  expect(initCommand("127.0.0.150:6443", "v1.34.2", "cp-1")).toBe(
    `kubeadm init --control-plane-endpoint 127.0.0.150:6443 --upload-certs --kubernetes-version v1.34.2 --cri-socket ${sock} --node-name cp-1 && mkdir -p $HOME/.kube && cp /etc/kubernetes/admin.conf $HOME/.kube/config`,
  );
  const m = parseInitOutput(out);
  expect(joinCommand(m, "127.0.0.150:6443", "worker-1", false)).toBe(`kubeadm join 127.0.0.150:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${hash} --cri-socket ${sock} --node-name worker-1`);
  expect(redacted(joinCommand(m, "127.0.0.150:6443", "cp-2", true))).toBe(
    `kubeadm join 127.0.0.150:6443 --token [redacted] --discovery-token-ca-cert-hash [redacted] --cri-socket ${sock} --node-name cp-2 --control-plane --certificate-key [redacted]`,
  );
  expect(joinCommand(m, "127.0.0.150:6443", "cp-2", true)).toBe(
    `kubeadm join 127.0.0.150:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash ${hash} --cri-socket ${sock} --node-name cp-2 --control-plane --certificate-key ${key}`,
  );
  expect(batches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  expect(() => batches([1], 0)).toThrow(/batch size 0/);
  expect(upgradeNodeCommand("v1.35.0", "kubeadm upgrade node")).toMatch(
    /^\{ .*echo v1\.35\.0 >\/etc\/lab-node\/kubeadm-version; \} && kubeadm upgrade node && \{ echo v1\.35\.0 >\/etc\/lab-node\/kubelet-version; \} && systemctl daemon-reload && systemctl restart kubelet$/,
  );
  const bash = (script: string) => {
    try {
      return { code: 0, out: execFileSync("bash", ["-c", script], { encoding: "utf8" }) };
    } catch (e) {
      return { code: (e as { status: number }).status, out: (e as { stdout: string }).stdout };
    }
  };
  expect(bash(sideBySide(["echo a", "echo b"])).code).toBe(0);
  expect(bash(sideBySide(["echo a", "exit 3", "echo c"]))).toMatchObject({ code: 1 });
});

test("step kinds, engine start and tail, kubeadm runs, sessions per node, names and addresses", () => {
  expect(kindOf("bench-worker-12-join-token")).toBe("join-token");
  expect(kindOf("bench-workers_2-node-metadata")).toBe("wave node-metadata");
  expect(kindOf("bench-cp-1-init")).toBe("init");
  const step = (name: string, startedAt: number, endedAt: number): StepRecord => ({
    name,
    type: "command:remote:Command",
    urn: name,
    op: "create",
    done: true,
    oldDelete: false,
    startedAt,
    endedAt,
  });
  const run = { steps: [step("b-cp-1-init", 102, 106), step("b-worker-1-join", 106, 108), step("b-worker-2-join", 106, 109)], started_epoch_s: 100.5, wall_s: 10 };
  expect(stepKinds([run])).toEqual({ init: { count: 1, mean_s: 4, max_s: 4 }, join: { count: 2, mean_s: 2.5, max_s: 3 } });
  expect(startAndTail(run)).toEqual({ before_first_command_s: 1.5, after_last_command_s: 1.5 });
  expect(timeline(run)).toEqual(["2s +4s b-cp-1-init", "6s +2s b-worker-1-join", "6s +3s b-worker-2-join"]);
  // With the times the events were received: to a tenth of a second, in the order they were received.
  const seen = { ...run, steps: [{ ...step("b-w-2-join", 106, 109), seenAt: 106.55, seenEndAt: 108.8 }, { ...step("b-w-1-join", 106, 108), seenAt: 106.2, seenEndAt: 108.25 }] };
  expect(timeline(seen)).toEqual(["5.7s +2.0s b-w-1-join", "6.0s +2.3s b-w-2-join"]);
  // The preview `pulumi up` runs first, over runs (median), beside the engine's start and tail.
  const benchRun = (previewMs: number | undefined) => ({ wall_s: 10, sessions: {}, kubeadm: {}, run: { wall_s: 10, sessions: {}, commands_run: 3, started_epoch_s: 100.5, state_kb: 1, engine: { mode: "up" as const, ok: true, steps: run.steps, changes: {}, outputs: {}, diagnostics: [], output: "", durationMs: 10000, ...(previewMs !== undefined ? { previewMs } : {}) } } });
  expect(engineEdges([benchRun(1200), benchRun(1500), benchRun(1300)])).toEqual({ before_first_command_s: 1.5, after_last_command_s: 1.5, preview_s: 1.3 });
  expect(engineEdges([benchRun(undefined)])).toEqual({ before_first_command_s: 1.5, after_last_command_s: 1.5 });
  expect(countKubeadmRuns(["2026-01-01T00:00:00Z cp-1 kubeadm upgrade apply", "t cp-2 kubeadm upgrade node", "t w kubeadm upgrade node"])).toEqual({
    "upgrade apply": 1,
    "upgrade node": 2,
  });
  const s = sessionFigures([{ "cp-1": 9, "cp-2": 1, "worker-1": 1 }, { "cp-1": 9, "cp-2": 1, "worker-1": 2 }]);
  expect(s).toMatchObject({ max: 9, max_node: "cp-1", min: 1, total: 11, same_in_every_run: false });
  expect(nodeNames({ controlPlanes: 2, workers: 1 })).toEqual(["cp-1", "cp-2", "worker-1"]);
  expect(addressOf(0)).toBe("127.0.0.150");
  expect(addressOf(49)).toBe("127.0.0.199");
  expect(() => addressOf(50)).toThrow(/outside 127.0.0.150-199/);
  // Refused before anything starts, naming the option and the most it can be.
  expect(fitsBenchLab({ controlPlanes: 3, workers: 47 })).toEqual({ controlPlanes: 3, workers: 47 });
  expect(() => fitsBenchLab({ controlPlanes: 3, workers: 48 })).toThrow("--workers 48: the bench lab holds 50 nodes (127.0.0.150-199), 3 of them control-plane: at most 47 workers");
});

test("the bench refuses a stack whose install commands would reach a package repository", () => {
  expect(() => assertLabInstalls({ ...LAB_INSTALLS })).not.toThrow();
  expect(() => assertLabInstalls({ "kubeadm:kubeadmInstallCommand": LAB_INSTALLS["kubeadm:kubeadmInstallCommand"] })).toThrow(/kubeletInstallCommand must be the lab's own/);
  expect(() => assertLabInstalls({ ...LAB_INSTALLS, "kubeadm:kubeadmInstallCommand": "curl -fsSL https://pkgs.k8s.io/x" })).toThrow(/kubeadmInstallCommand/);
});

test("the JSON's setup says how the engine saved the state; the state file is found whatever its compression", () => {
  expect(stateSetup({})).toEqual({});
  expect(stateSetup({ PULUMI_SKIP_CHECKPOINTS: "true", PULUMI_DIY_BACKEND_ZSTD: "1", PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS: "TRUE" })).toEqual({
    state_saves: "skipped (PULUMI_SKIP_CHECKPOINTS=true)",
    state_compression: "zstd (PULUMI_DIY_BACKEND_ZSTD=1)",
    state_backups: "none (PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_BACKUPS=TRUE)",
  });
  expect(stateSetup({ PULUMI_DIY_BACKEND_GZIP: "True" })).toEqual({ state_compression: "gzip (PULUMI_DIY_BACKEND_GZIP=True)" });
  // The alternative names, as the engine reads them: only when the name itself is not set at all.
  expect(stateSetup({ PULUMI_SELF_MANAGED_STATE_GZIP: "1", PULUMI_RETAIN_CHECKPOINTS: "true" })).toEqual({
    state_compression: "gzip (PULUMI_SELF_MANAGED_STATE_GZIP=1)",
    state_history: "every save also written to a file of its own (PULUMI_RETAIN_CHECKPOINTS=true)",
  });
  expect(stateSetup({ PULUMI_DIY_BACKEND_ZSTD: "", PULUMI_SELF_MANAGED_STATE_ZSTD: "true" })).toEqual({});
  // As the engine reads them: anything but 1 or true is off.
  expect(stateSetup({ PULUMI_DIY_BACKEND_GZIP: "yes", PULUMI_SKIP_CHECKPOINTS: "0" })).toEqual({});
  const dir = mkdtempSync(join(tmpdir(), "bench-state-"));
  try {
    expect(() => stackStateFile(join(dir, "bench"))).toThrow(/no state file .*bench\.json, \.json\.gz or \.json\.zst/);
    writeFileSync(join(dir, "bench.json.zst"), "");
    expect(stackStateFile(join(dir, "bench"))).toBe(join(dir, "bench.json.zst"));
    // Several: the most recently modified, as the engine reads it.
    writeFileSync(join(dir, "bench.json"), "");
    utimesSync(join(dir, "bench.json"), 1000, 1000);
    expect(stackStateFile(join(dir, "bench"))).toBe(join(dir, "bench.json.zst"));
    utimesSync(join(dir, "bench.json.zst"), 500, 500);
    expect(stackStateFile(join(dir, "bench"))).toBe(join(dir, "bench.json"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
