/**
 * `runProgram`: runs a real Pulumi TypeScript program under Pulumi's mock runtime, executes every
 * `command:remote:Command` for real through an {@link Executor}, and keeps a state file that follows
 * the engine's and the command provider's rules (see state.ts for the format):
 *
 * - not in state → create (a failed create is not recorded: the next run creates again);
 * - inputs other than `triggers` changed → update: `update` if set, else `create` again (a failed
 *   update keeps the old record);
 * - `triggers` changed → replace: create the new one, then run the OLD `delete` after the program has
 *   settled (create-before-delete, as the engine's DeleteReplaced steps); with `deleteBeforeReplace`
 *   the old `delete` runs first;
 * - all inputs equal (secrets compared by value, `ignoreChanges` keys left out) → nothing runs, the
 *   previous outputs are returned;
 * - in state but not registered by the program → its `delete` runs after the program settled, in
 *   reverse dependency order;
 * - the first failure stops the run as the engine does: no further command starts (later steps are
 *   reported `skipped`), no deletes run; in-flight commands finish.
 *
 * Resource options are not passed to `Mocks.newResource`, so the runner wraps the mock monitor's
 * `registerResource` to read them from the request: dependencies (dependsOn + resources whose outputs
 * fed the inputs), `deleteBeforeReplace`, `additionalSecretOutputs`, `ignoreChanges`.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { runCommand, CommandProps } from "./command";
import { Masker, UNKNOWN_VALUE, isSecretWrapper, isUnknownValue, unwrapSecrets, wrapSecret } from "./secrets";
import { StateCrypto, StateFile, StateRecord, loadState, reverseDependencyOrder, saveState } from "./state";
import { readStackFile, stackNameOf } from "./stackfile";
import { openSshExecutor } from "./ssh";
import { Executor, LogFn, Mode, Op, ResourceResult, RunResult } from "./types";

export const COMMAND_TYPE = "command:remote:Command";
/** A StackReference answers with this stack's outputs from its last successful apply (state.stackOutputs). */
export const STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference";

export interface RunOptions {
  mode: Mode;
  /** Pulumi.<stack>.yaml; required for preview/apply; for destroy it only names the stack. */
  stackFile?: string;
  /** Stack name when no stack file is given (destroy). */
  stack?: string;
  /** The program: a .ts file or a directory holding index.ts. Default: the repo's root index.ts. */
  programPath?: string;
  /** Default `<labDir>/state/<stack>.json`. */
  statePath?: string;
  /** Default: `$LAB_DIR` when set (as for every lab command, see test/lab/README.md), else `<repo>/.lab`. */
  labDir?: string;
  /** Progress lines (already masked). Default: stdout. */
  log?: LogFn;
  /** Default: the OpenSSH executor. */
  executor?: Executor;
  /** Default: `name:` of the Pulumi.yaml beside the program, else `kubeadm`. */
  project?: string;
  /** At most this many commands at once (like `pulumi up --parallel`); default unlimited. */
  parallel?: number;
  /** Environment names the SSH servers accept (sshd AcceptEnv); default Debian's `LANG LC_*`. */
  acceptEnv?: string[];
  /** Base delay between dial retries; default 500 ms. */
  dialRetryDelayMs?: number;
}

export const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");

interface RegMeta {
  dependencies: string[];
  deleteBeforeReplace: boolean;
  additionalSecretOutputs: string[];
  ignoreChanges: string[];
}

/** Fields the old `delete` needs later; sealed in the state. */
const DELETE_PROPS = ["connection", "delete", "environment", "stdin", "logging", "addPreviousOutputInEnv"];

function nameOfUrn(urn: string): string {
  const i = urn.lastIndexOf("::");
  return i >= 0 ? urn.slice(i + 2) : urn;
}

function projectOf(programFile: string): string {
  const y = path.join(path.dirname(programFile), "Pulumi.yaml");
  if (fs.existsSync(y)) {
    const m = /^name:\s*["']?([A-Za-z0-9_.-]+)/m.exec(fs.readFileSync(y, "utf8"));
    if (m) return m[1]!;
  }
  return "kubeadm";
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Replaces unknowns (preview) by the RPC unknown sentinel, keeping secret wrappers, so the state can be returned. */
function returnable(v: unknown): unknown {
  if (isUnknownValue(v)) return UNKNOWN_VALUE;
  if (isSecretWrapper(v)) return wrapSecret(returnable(v.value));
  if (Array.isArray(v)) return v.map(returnable);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) if (e !== undefined) out[k] = returnable(e);
    return out;
  }
  return v;
}

class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.max > 0 && this.active >= this.max) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await f();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

/** Loads the program module fresh (a second run in the same process must register again). */
function loadProgram(file: string): Record<string, unknown> {
  let mod: Record<string, unknown> = {};
  if (typeof jest !== "undefined") {
    // Under jest, require.cache is jest's registry: isolate to get a fresh module. The Pulumi
    // runtime's state is global (globalThis), so the fresh SDK copy shares the mocks and config.
    jest.isolateModules(() => {
      mod = require(file) as Record<string, unknown>;
    });
  } else {
    delete require.cache[require.resolve(file)];
    mod = require(file) as Record<string, unknown>;
  }
  return mod;
}

/**
 * Runs the Pulumi program under the mock runtime as `pulumi preview`/`up`/`destroy` would, executing
 * each `command.remote.Command` over SSH in dependency order and keeping the state file (see
 * {@link RunOptions} for the defaults; the lab folder is `opts.labDir`, else `$LAB_DIR`, else `<repo>/.lab`).
 * Failures of the program or of a command are reported in the result (`ok: false`, `errors`), not thrown.
 * @throws Error without a stack file (preview, apply) or stack name (destroy), or when the program
 *   cannot be resolved; StackFileError on a stack file it cannot use
 *   (bad name, encrypted `secure:` values).
 */
export async function runProgram(opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const labDir = path.resolve(opts.labDir ?? (process.env.LAB_DIR || path.join(REPO_ROOT, ".lab")));
  const log: LogFn = opts.log ?? ((l) => process.stdout.write(l + "\n"));
  const executor = opts.executor ?? openSshExecutor();
  const masker = new Masker();
  const say = (line: string): void => log(masker.mask(line));
  const stack = opts.stack ?? (opts.stackFile ? stackNameOf(opts.stackFile) : undefined);
  if (!stack) throw new Error("a stack file (or a stack name for destroy) is required");
  const statePath = opts.statePath ?? path.join(labDir, "state", `${stack}.json`);
  const sc = new StateCrypto(path.dirname(statePath));
  const state: StateFile = loadState(statePath, stack);
  const results: ResourceResult[] = [];
  const sessions: Record<string, number> = {};
  const errors: string[] = [];
  const sem = new Semaphore(opts.parallel ?? 0);
  const acceptEnv = opts.acceptEnv ?? ["LANG", "LC_*"];
  const dialRetryDelayMs = opts.dialRetryDelayMs ?? 500;
  let failed = false;
  let outputs: Record<string, unknown> = {};
  const preview = opts.mode === "preview";

  const newResult = (name: string, type: string, op: Op): ResourceResult => {
    const r: ResourceResult = { name, type, op, ok: true, durationMs: 0, sshSessions: 0, ran: [] };
    results.push(r);
    return r;
  };

  /** Runs one of a record's commands, counting sessions and printing progress. */
  const exec = async (
    r: ResourceResult,
    label: string,
    command: string | undefined,
    props: CommandProps,
    previous?: { stdout: string; stderr: string },
  ): Promise<{ stdout: string; stderr: string }> => {
    if (command === undefined) return { stdout: "", stderr: "" };
    return sem.run(async () => {
      const t0 = Date.now();
      say(`${r.name}: ${label} ...`);
      r.ran.push(label);
      try {
        const out = await runCommand({
          name: r.name, label, command, props, previous, executor, log, masker, acceptEnv, dialRetryDelayMs,
          onSession: (hp) => {
            sessions[hp] = (sessions[hp] ?? 0) + 1;
            r.sshSessions++;
          },
        });
        r.durationMs += Date.now() - t0;
        say(`${r.name}: ${label} done (${secs(Date.now() - t0)})`);
        return out;
      } catch (e) {
        r.durationMs += Date.now() - t0;
        const msg = masker.mask(e instanceof Error ? e.message : String(e));
        say(`${r.name}: ${label} FAILED (${secs(Date.now() - t0)}): ${msg}`);
        throw new Error(`${r.name}: ${label} failed: ${msg}`);
      }
    });
  };

  const openRecord = (rec: StateRecord): { props: Record<string, unknown>; outputs: Record<string, string> } => {
    const content = sc.open(rec.sealed);
    const u = unwrapSecrets(content.props);
    masker.add(...u.secretStrings);
    for (const v of Object.values(content.secretOutputs)) masker.add(v);
    return { props: content.props, outputs: { ...rec.outputs, ...content.secretOutputs } };
  };

  /** Runs a recorded resource's delete; true when it succeeded (or there was none). */
  const deleteRecord = async (rec: StateRecord, label: string): Promise<boolean> => {
    const r = newResult(rec.name, rec.type, "delete");
    if (rec.type !== COMMAND_TYPE) return true;
    if (preview) {
      say(`${rec.name}: ${label === "delete" ? "delete" : "delete (old, replaced)"}`);
      return true;
    }
    if (failed) {
      r.ok = false;
      r.skipped = true;
      r.error = "not run: an earlier step failed";
      return false;
    }
    try {
      const { props, outputs } = openRecord(rec);
      await exec(r, label, props["delete"] as string | undefined, props as CommandProps, {
        stdout: outputs["stdout"] ?? "",
        stderr: outputs["stderr"] ?? "",
      });
      return true;
    } catch (e) {
      failed = true;
      r.ok = false;
      r.error = e instanceof Error ? e.message : String(e);
      return false;
    }
  };

  if (opts.mode === "destroy") {
    say(`destroy: stack ${stack}, state ${statePath}`);
    const all = [...state.pendingDeletes, ...Object.values(state.resources)];
    for (const rec of reverseDependencyOrder(all)) {
      const ok = await deleteRecord(rec, "delete");
      if (!ok) break;
      state.pendingDeletes = state.pendingDeletes.filter((p) => p !== rec);
      if (state.resources[rec.name] === rec) delete state.resources[rec.name];
      saveState(statePath, state);
    }
    if (!failed) saveState(statePath, { ...state, resources: {}, pendingDeletes: [] });
    return finish();
  }

  // ---- preview / apply: run the program under the mock runtime ----
  if (!opts.stackFile) throw new Error("preview and apply need a stack file");
  const programArg = path.resolve(opts.programPath ?? REPO_ROOT);
  const programFile = require.resolve(
    fs.existsSync(programArg) && fs.statSync(programArg).isDirectory() ? path.join(programArg, "index.ts") : programArg,
  );
  const project = opts.project ?? projectOf(programFile);
  const cfg = readStackFile(opts.stackFile, project, labDir);
  for (const i of cfg.injected) say(`lab: injected ${i}`);
  for (const k of cfg.secretKeys) masker.add(cfg.config[k]);

  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const pulumi = require("@pulumi/pulumi") as typeof import("@pulumi/pulumi");
  const settings = require("@pulumi/pulumi/runtime/settings") as {
    getMonitor(): unknown;
  };

  const metas = new Map<string, RegMeta>();
  const registered = new Set<string>();
  const pending = new Set<Promise<unknown>>();
  const replacedOld: StateRecord[] = [];

  const handleCommand = async (name: string, rawInputs: Record<string, unknown>): Promise<MockResult | typeof STOPPED> => {
    const meta = metas.get(name) ?? { dependencies: [], deleteBeforeReplace: false, additionalSecretOutputs: [], ignoreChanges: [] };
    const u = unwrapSecrets(rawInputs);
    masker.add(...u.secretStrings);
    const inputs = u.value as Record<string, unknown>;
    const { triggers, ...rest } = inputs;
    for (const k of meta.ignoreChanges) delete rest[k];
    const triggersHash = sc.hash(triggers ?? null);
    const inputsHash = sc.hash(rest);
    const prev = state.resources[name];
    const prevOpen = prev ? openRecord(prev) : undefined;
    let op: Op;
    if (!prev || prev.type !== COMMAND_TYPE) op = "create";
    else if (u.hasUnknown) op = prev.triggersHash !== triggersHash ? "replace" : "update";
    else if (prev.triggersHash !== triggersHash) op = "replace";
    else if (prev.inputsHash !== inputsHash) op = "update";
    else op = "same";
    const r = newResult(name, COMMAND_TYPE, op);
    const secretOut = (k: string): boolean => meta.additionalSecretOutputs.includes(k) || inputs["logging"] === "none";
    const base = returnable(rawInputs) as Record<string, unknown>;
    const withOutputs = (o: { stdout: string; stderr: string } | "unknown"): Record<string, unknown> => {
      const s: Record<string, unknown> = { ...base };
      for (const k of ["stdout", "stderr"] as const) {
        const v = o === "unknown" ? UNKNOWN_VALUE : o[k];
        s[k] = meta.additionalSecretOutputs.includes(k) && o !== "unknown" ? wrapSecret(v) : v;
      }
      return s;
    };
    const id = prev?.id ?? `${name}-${crypto.randomBytes(4).toString("hex")}`;
    const prevOutputs = prevOpen ? { stdout: prevOpen.outputs["stdout"] ?? "", stderr: prevOpen.outputs["stderr"] ?? "" } : undefined;

    if (op === "same") {
      say(`${name}: same`);
      return { id, state: withOutputs(prevOutputs!) };
    }
    if (preview) {
      say(`${name}: ${op}${op === "replace" && meta.deleteBeforeReplace ? " (delete before replace)" : ""}`);
      return { id, state: withOutputs("unknown") };
    }
    if (failed) {
      r.ok = false;
      r.skipped = true;
      r.error = "not run: an earlier step failed";
      say(`${name}: ${op} skipped: an earlier step failed`);
      return STOPPED;
    }

    const props = inputs as CommandProps;
    const record = (out: { stdout: string; stderr: string }, newId: string): void => {
      const outputs: Record<string, string> = {};
      const secretOutputs: Record<string, string> = {};
      for (const k of ["stdout", "stderr"] as const) {
        if (secretOut(k)) {
          secretOutputs[k] = out[k];
          masker.add(out[k]);
        } else outputs[k] = out[k];
      }
      const sealedProps: Record<string, unknown> = {};
      for (const k of DELETE_PROPS) if (inputs[k] !== undefined) sealedProps[k] = inputs[k];
      state.resources[name] = {
        name, type: COMMAND_TYPE, id: newId, seq: prev && op !== "replace" ? prev.seq : state.nextSeq++,
        dependencies: meta.dependencies, inputsHash, triggersHash, outputs,
        sealed: sc.seal({ props: sealedProps, secretOutputs }),
      };
      saveState(statePath, state);
    };

    try {
      if (op === "create") {
        const out = await exec(r, "create", inputs["create"] as string | undefined, props);
        record(out, id);
        return { id, state: withOutputs(out) };
      }
      if (op === "update") {
        const cmd = (inputs["update"] ?? inputs["create"]) as string | undefined;
        const out = await exec(r, inputs["update"] !== undefined ? "update" : "update (create again)", cmd, props, prevOutputs);
        record(out, id);
        return { id, state: withOutputs(out) };
      }
      // replace
      const old = prev!;
      if (meta.deleteBeforeReplace) {
        const oldProps = prevOpen!.props;
        await exec(r, "delete (old, delete before replace)", oldProps["delete"] as string | undefined, oldProps as CommandProps, prevOutputs);
        delete state.resources[name];
        saveState(statePath, state);
      } else {
        state.pendingDeletes.push(old);
        replacedOld.push(old);
      }
      const newId = `${name}-${crypto.randomBytes(4).toString("hex")}`;
      const out = await exec(r, "create (replacement)", inputs["create"] as string | undefined, props);
      record(out, newId);
      return { id: newId, state: withOutputs(out) };
    } catch (e) {
      failed = true;
      r.ok = false;
      r.error = e instanceof Error ? e.message : String(e);
      if (op === "replace" && !meta.deleteBeforeReplace) {
        // the replacement was never created: the old resource stays as it was
        state.pendingDeletes = state.pendingDeletes.filter((p) => p !== prev);
        replacedOld.splice(replacedOld.indexOf(prev!), 1);
        saveState(statePath, state);
      }
      return STOPPED;
    }
  };

  const mocks = {
    newResource(args: { type: string; name: string; inputs: Record<string, unknown> }): Promise<MockResult> {
      registered.add(args.name);
      const p: Promise<MockResult | typeof STOPPED> =
        args.type === COMMAND_TYPE
          ? handleCommand(args.name, args.inputs)
          : args.type === STACK_REFERENCE_TYPE
            ? Promise.resolve({ id: `${args.name}`, state: { name: args.name, outputs: state.stackOutputs ?? {}, secretOutputNames: [] } })
            : Promise.resolve({ id: `${args.name}-id`, state: returnable(args.inputs) as Record<string, unknown> });
      const tracked = p.finally(() => pending.delete(tracked));
      tracked.catch(() => undefined);
      pending.add(tracked);
      return p.then((v) => (v === STOPPED ? NEVER : v));
    },
    call(): Record<string, unknown> {
      return {};
    },
  };

  const unhandled = (reason: unknown): void => {
    // The SDK wraps an error thrown in an output's apply in one "error serializing property" per level.
    const text = (reason instanceof Error ? reason.message : String(reason)).replace(/^(error serializing property "[^"]*": )+/, "");
    const msg = masker.mask(text);
    if (!errors.includes(msg) && !results.some((r) => r.error !== undefined && msg.includes(r.error))) errors.push(msg);
  };
  process.on("unhandledRejection", unhandled);

  try {
    // "organization" is what a self-managed backend calls every stack's organization.
    await pulumi.runtime.setMocks(mocks, project, stack, preview, "organization");
    // Read the resource options the mocks are not given, from the registration request itself.
    const monitor = settings.getMonitor() as { registerResource: (req: RegReq, cb: unknown) => unknown };
    const orig = monitor.registerResource.bind(monitor);
    monitor.registerResource = (req: RegReq, cb: unknown) => {
      metas.set(req.getName(), {
        dependencies: req.getDependenciesList().map(nameOfUrn),
        deleteBeforeReplace: req.getDeletebeforereplace(),
        additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
        ignoreChanges: req.getIgnorechangesList(),
      });
      return orig(req, cb);
    };
    pulumi.runtime.setAllConfig(cfg.config, cfg.secretKeys);
    say(`${opts.mode}: program ${path.relative(process.cwd(), programFile) || programFile}, stack ${stack} (project ${project})`);

    const programDone = (async (): Promise<Record<string, unknown>> => {
      try {
        const mod = loadProgram(programFile);
        if (typeof mod["default"] !== "function") return mod;
        const ret = await (mod["default"] as () => unknown)();
        return typeof ret === "object" && ret !== null ? (ret as Record<string, unknown>) : {};
      } catch (e) {
        errors.push(masker.mask(`program failed: ${e instanceof Error ? e.message : String(e)}`));
        return {};
      }
    })();
    // Settle: every command has finished and no registration came for a few turns of the event loop.
    // (The SDK's own waitForRPCs cannot be used: a failed step's registration never completes.)
    for (let quiet = 0, seen = -1; quiet < 4; ) {
      await Promise.allSettled([...pending]);
      await new Promise((res) => setTimeout(res, 5));
      quiet = pending.size === 0 && registered.size === seen ? quiet + 1 : 0;
      seen = registered.size;
    }
    const mod = await Promise.race([programDone, delay(100).then(() => undefined)]);
    if (mod === undefined) errors.push("the program did not finish (it waits on a step that failed or was not run)");
    outputs = await stackOutputs(mod ?? {}, pulumi);
  } finally {
    process.off("unhandledRejection", unhandled);
  }

  // Deletes: replaced resources' old deletes and removed resources, after the program settled.
  const removed = Object.values(state.resources).filter((rec) => !registered.has(rec.name));
  const toDelete = reverseDependencyOrder([...state.pendingDeletes, ...removed]);
  for (const rec of toDelete) {
    const isOld = state.pendingDeletes.includes(rec);
    if (preview && isOld) {
      say(`${rec.name}: delete (old, replaced)`);
      continue;
    }
    const ok = await deleteRecord(rec, isOld ? "delete (old, replaced)" : "delete");
    if (preview) continue;
    if (!ok) break;
    if (isOld) state.pendingDeletes = state.pendingDeletes.filter((p) => p !== rec);
    else delete state.resources[rec.name];
    saveState(statePath, state);
  }
  if (!preview) {
    if (!failed && errors.length === 0 && results.every((r) => r.ok) && opts.mode === "apply") {
      state.stackOutputs = Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== "[secret]"));
    }
    saveState(statePath, state);
  }
  return finish();

  function finish(): RunResult {
    const ok = !failed && errors.length === 0 && results.every((r) => r.ok);
    const summary: Record<string, number> = {};
    for (const r of results) summary[r.op] = (summary[r.op] ?? 0) + 1;
    say(
      `${opts.mode} ${ok ? "succeeded" : "FAILED"} in ${secs(Date.now() - started)}: ` +
        Object.entries(summary).map(([k, v]) => `${v} ${k}`).join(", ") +
        `; ssh sessions: ${Object.values(sessions).reduce((a, b) => a + b, 0)}`,
    );
    for (const e of errors) say(`error: ${e}`);
    return { mode: opts.mode, stack: stack!, ok, resources: results, outputs, sshSessions: sessions, errors, durationMs: Date.now() - started };
  }
}

/**
 * What `newResource` returns for a step that failed or was not run: a registration that never
 * completes. Its outputs never resolve, so nothing that depends on it registers (the engine stops
 * launching steps after a failure), and no rejection is left unhandled in the program.
 */
const NEVER = new Promise<never>(() => undefined);
const STOPPED = Symbol("stopped");

interface MockResult {
  id: string;
  state: Record<string, unknown>;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface RegReq {
  getName(): string;
  getDependenciesList(): string[];
  getDeletebeforereplace(): boolean;
  getAdditionalsecretoutputsList(): string[];
  getIgnorechangesList(): string[];
}

/** The program's exports, resolved; secret ones replaced by `[secret]`, unknown ones (preview) by `[unknown]`. */
async function stackOutputs(mod: Record<string, unknown>, pulumi: typeof import("@pulumi/pulumi")): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(mod)) {
    if (k === "default" || k === "__esModule" || typeof v === "function") continue;
    if (pulumi.Output.isInstance(v)) {
      try {
        const o = v as unknown as { promise(withUnknowns?: boolean): Promise<unknown>; isSecret: Promise<boolean>; isKnown: Promise<boolean> };
        const got = await Promise.race([Promise.all([o.promise(true), o.isSecret, o.isKnown]), delay(50).then(() => undefined)]);
        if (got === undefined) {
          out[k] = "[not available: a step it needs failed or was not run]";
          continue;
        }
        const [value, secret, known] = got;
        out[k] = secret ? "[secret]" : !known || isUnknownValue(value) ? "[unknown]" : unwrapSecrets(value).value;
      } catch (e) {
        out[k] = `[error: ${e instanceof Error ? e.message : String(e)}]`;
      }
    } else {
      out[k] = unwrapSecrets(v).value;
    }
  }
  return out;
}
