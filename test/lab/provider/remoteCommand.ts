/**
 * The stand-in's `command:remote:Command` resource: the CRUD rules of pulumi-command 1.2.1
 * (provider/pkg/provider/remote/commandController.go, with pulumi-go-provider's `infer` defaults):
 *
 * - check: the inputs as given;
 * - diff: any input that changed is an update, except `triggers`, whose change is a replacement
 *   (`replaceOnChanges`); no delete-before-replace of its own (the resource option decides);
 * - create: runs `create` when set; the state is the inputs plus `stdout`/`stderr`, `connection`
 *   secret; a failed create returns an error and nothing is recorded;
 * - update: runs `update`, else `create`; the previous output goes to the command's environment
 *   unless `addPreviousOutputInEnv` is false; a failed update keeps the old state;
 * - delete: runs `delete` (from the state) when set;
 * - read (refresh): returns the state unchanged: no command runs.
 */
import * as crypto from "crypto";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { CommandProps, runCommand } from "./command";
import { Executor, LogFn } from "./types";
import { hasUnknown, reveal, sameValue, secret } from "./values";

/** The inputs pulumi-command's remote Command declares. */
export const INPUT_KEYS = ["connection", "create", "update", "delete", "triggers", "stdin", "logging", "environment", "addPreviousOutputInEnv"];

export interface RemoteCommandDeps {
  executor: Executor;
  /** A log function for one resource, by URN. */
  logFor: (urn: string) => LogFn;
  acceptEnv?: string[];
  dialRetryDelayMs?: number;
}

type Props = Record<string, unknown>;

function nameOf(urn: string): string {
  return urn.slice(urn.lastIndexOf("::") + 2);
}

async function run(deps: RemoteCommandDeps, urn: string, command: string, props: Props, previous?: Props) {
  const revealed = reveal(props) as CommandProps;
  return runCommand({
    command,
    props: revealed,
    previous: previous ? { stdout: String(reveal(previous["stdout"]) ?? ""), stderr: String(reveal(previous["stderr"]) ?? "") } : undefined,
    executor: deps.executor,
    log: deps.logFor(urn),
    acceptEnv: deps.acceptEnv,
    dialRetryDelayMs: deps.dialRetryDelayMs,
  });
}

function state(inputs: Props, out: { stdout: string; stderr: string }): Props {
  const s: Props = {};
  for (const k of INPUT_KEYS) if (inputs[k] !== undefined) s[k] = inputs[k];
  if (s["connection"] !== undefined) s["connection"] = secret(s["connection"]);
  return { ...s, stdout: out.stdout, stderr: out.stderr };
}

/** The CRUD functions of the resource, for the provider server. */
export function remoteCommand(deps: RemoteCommandDeps) {
  return {
    async diff(olds: Props, news: Props): Promise<dynamic.DiffResult> {
      const changed = INPUT_KEYS.filter((k) => hasUnknown(news[k]) || !sameValue(olds[k], news[k]));
      return { changes: changed.length > 0, replaces: changed.filter((k) => k === "triggers"), deleteBeforeReplace: false };
    },
    async create(urn: string, inputs: Props): Promise<{ id: string; outs: Props }> {
      const id = `${nameOf(urn)}${crypto.randomBytes(4).toString("hex")}`;
      const create = reveal(inputs["create"]);
      const out = typeof create === "string" ? await run(deps, urn, create, inputs) : { stdout: "", stderr: "" };
      return { id, outs: state(inputs, out) };
    },
    async update(urn: string, olds: Props, news: Props): Promise<{ outs: Props }> {
      const cmd = reveal(news["update"]) ?? reveal(news["create"]);
      const previous = { stdout: String(reveal(olds["stdout"]) ?? ""), stderr: String(reveal(olds["stderr"]) ?? "") };
      const out = typeof cmd === "string" ? await run(deps, urn, cmd, news, olds) : previous;
      return { outs: state(news, out) };
    },
    async delete(urn: string, props: Props): Promise<void> {
      const del = reveal(props["delete"]);
      if (typeof del === "string") await run(deps, urn, del, props, props);
    },
  };
}
