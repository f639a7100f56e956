/**
 * TEST DOUBLE, not real kubectl: the kubectl subset the project uses, answered from the lab's cluster
 * store, with kubectl's argument forms and (mostly) its messages. Shared by the on-node entry point
 * (kubectl.ts) and the host's `npm run lab -- kubectl` (cli.ts). Drain messages are UNVERIFIED.
 */
import * as fs from "fs";
import { parse } from "yaml";
import { boolFlag, type Cli, Fail, clockMs, parseCli, parseGoDuration, stepDuration } from "./common";
import { goYaml } from "./kubeadmconfig";
import { jsonpath } from "./jsonpath";
import { ConfigMapObject, NodeObject, readStore, setDrainBlock, Store, updateStore } from "./store";

/** kubectl's command line, parsed as the kubeadm stand-ins parse theirs (no boolean shorthands). */
type Parsed = Cli;

const VALUE_FLAGS = ["n", "namespace", "o", "output", "kubeconfig", "f", "filename", "timeout", "grace-period", "for", "l", "selector"];

/**
 * kubectl's command line through the stand-ins' parser ({@link parseCli}), with kubectl's own forms
 * first: everything after `--` is positional, and the attached short forms `-ojson`, `-nkube-system` are
 * read as `-o json`, `-n kube-system`.
 */
function parseArgs(args: string[]): Parsed {
  const end = args.indexOf("--");
  const own = end < 0 ? args : args.slice(0, end);
  const spaced = own.flatMap((a) => {
    const short = /^-([no])([^=-].*)$/s.exec(a);
    return short ? [`-${short[1]}`, short[2] as string] : [a];
  });
  const out = parseCli(spaced, VALUE_FLAGS);
  if (end >= 0) out.positional.push(...args.slice(end + 1));
  return out;
}

function flag(p: Parsed, ...names: string[]): string | undefined {
  for (const n of names) if (typeof p.flags[n] === "string") return p.flags[n] as string;
  return undefined;
}

function kind(resource: string): "node" | "configmap" {
  const r = resource.toLowerCase();
  if (["node", "nodes", "no"].includes(r)) return "node";
  if (["configmap", "configmaps", "cm"].includes(r)) return "configmap";
  throw new Fail(`error: the server doesn't have a resource type "${resource}"`);
}

/** `node N`, `nodes N`, `node/N`. */
function target(positional: string[]): { kind: "node" | "configmap"; name?: string; rest: string[] } {
  const [first, ...rest] = positional;
  if (first === undefined) throw new Fail("error: You must specify the type of resource to get.");
  if (first.includes("/")) {
    const [r, n] = first.split("/", 2);
    return { kind: kind(r), name: n, rest };
  }
  return { kind: kind(first), name: rest[0], rest: rest.slice(1) };
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) o[k] = sortKeys((v as Record<string, unknown>)[k]);
    return o;
  }
  return v;
}

function output(obj: unknown, format: string | undefined, table: () => string): string {
  if (format === undefined || format === "wide") return table();
  if (format === "json") return JSON.stringify(sortKeys(obj), null, 4) + "\n";
  if (format === "yaml") return goYaml(obj);
  if (format === "name") {
    const items = (obj as { items?: { kind: string; metadata: { name: string } }[] }).items ?? [obj as { kind: string; metadata: { name: string } }];
    return items.map((i) => `${i.kind.toLowerCase()}/${i.metadata.name}\n`).join("");
  }
  const m = /^jsonpath=(.*)$/s.exec(format);
  if (m) {
    let t = m[1];
    if (/^'.*'$/s.test(t)) t = t.slice(1, -1);
    return jsonpath(t, obj);
  }
  throw new Fail(`error: unable to match a printer suitable for the output format "${format}", allowed formats are: json,jsonpath,name,wide,yaml`);
}

function age(ts: string): string {
  const s = Math.max(0, Math.floor((clockMs() - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function columns(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] + 3))).join("") + "\n").join("");
}

export function nodeStatus(n: NodeObject): string {
  const ready = n.status.conditions.find((c) => c.type === "Ready");
  const s = ready?.status === "True" ? "Ready" : ready?.status === "False" ? "NotReady" : ready ? "NotReady" : "Unknown";
  return n.spec.unschedulable ? `${s},SchedulingDisabled` : s;
}

/** kubectl's LABELS column: `k=v` pairs sorted by key, comma-separated, `<none>` when there are none. */
function labelsCell(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  return keys.length === 0 ? "<none>" : keys.map((k) => `${k}=${(labels as Record<string, string>)[k]}`).join(",");
}

/** How `get` prints its table: `-o wide`'s extra columns, `--show-labels`' LABELS column last. */
interface TableForm {
  wide: boolean;
  showLabels: boolean;
}

/**
 * kubectl's Node table (its printNode). `-o wide` adds INTERNAL-IP and EXTERNAL-IP (from
 * `status.addresses`, which the lab's Nodes do not have: `<none>`, as kubectl prints a missing one),
 * OS-IMAGE and KERNEL-VERSION (not in the lab's `nodeInfo`: `<unknown>`, as kubectl prints an empty one)
 * and CONTAINER-RUNTIME.
 */
function nodeTable(nodes: NodeObject[], form: TableForm): string {
  if (nodes.length === 0) return "";
  const head = ["NAME", "STATUS", "ROLES", "AGE", "VERSION"];
  if (form.wide) head.push("INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME");
  if (form.showLabels) head.push("LABELS");
  const rows = [head];
  for (const n of nodes) {
    const roles = Object.keys(n.metadata.labels)
      .filter((k) => k.startsWith("node-role.kubernetes.io/"))
      .map((k) => k.slice("node-role.kubernetes.io/".length))
      .sort();
    const row = [n.metadata.name, nodeStatus(n), roles.length ? roles.join(",") : "<none>", age(n.metadata.creationTimestamp), n.status.nodeInfo.kubeletVersion];
    if (form.wide) row.push("<none>", "<none>", "<unknown>", "<unknown>", n.status.nodeInfo.containerRuntimeVersion || "<unknown>");
    if (form.showLabels) row.push(labelsCell(n.metadata.labels));
    rows.push(row);
  }
  return columns(rows);
}

/** kubectl's ConfigMap table (`-o wide` adds no column for ConfigMaps). */
function configMapTable(items: ConfigMapObject[], form: TableForm): string {
  const head = ["NAME", "DATA", "AGE", ...(form.showLabels ? ["LABELS"] : [])];
  const row = (c: ConfigMapObject) => [c.metadata.name, String(Object.keys(c.data).length), age(c.metadata.creationTimestamp), ...(form.showLabels ? [labelsCell(c.metadata.labels)] : [])];
  return columns([head, ...items.map(row)]);
}

/**
 * A boolean flag of `kubectl <verb>` (see {@link boolFlag}), read before the command does anything; a
 * bad value fails as kubectl's flag error does (its templater's FlagErrorFunc): `error: <pflag's
 * message>` and `See 'kubectl <verb> --help' for usage.`
 */
const kubectlBool = (p: Parsed, verb: string, name: string): boolean =>
  boolFlag(p, name, (m) => new Fail(`error: ${m}\nSee 'kubectl ${verb} --help' for usage.`));

/** The flags this stand-in's `get` reads; kubectl's others are refused rather than ignored. */
const GET_FLAGS = ["o", "output", "n", "namespace", "show-labels"];

function getNode(s: Store, name: string): NodeObject {
  const n = s.nodes[name];
  if (!n) throw new Fail(`Error from server (NotFound): nodes "${name}" not found`);
  return n;
}

function getConfigMap(s: Store, ns: string, name: string): ConfigMapObject {
  const c = s.configMaps[`${ns}/${name}`];
  if (!c) throw new Fail(`Error from server (NotFound): configmaps "${name}" not found`);
  return c;
}

async function get(p: Parsed): Promise<string> {
  const unsupported = Object.keys(p.flags).filter((f) => !GET_FLAGS.includes(f));
  if (unsupported.length > 0) {
    throw new Fail(`error: this lab stand-in's kubectl get does not support ${unsupported.map((f) => (f.length === 1 ? `-${f}` : `--${f}`)).join(", ")} (it reads -o/--output, -n/--namespace and --show-labels)`);
  }
  const showLabels = kubectlBool(p, "get", "show-labels");
  const t = target(p.positional);
  const s = await readStore();
  const fmt = flag(p, "o", "output");
  const form: TableForm = { wide: fmt === "wide", showLabels };
  if (t.kind === "node") {
    if (t.name && t.rest.length === 0) {
      const n = getNode(s, t.name);
      return output(n, fmt, () => nodeTable([n], form));
    }
    if (t.name) {
      // Several names: kubectl's List of the Nodes it found, then its error for each one it did not (exit 1).
      const names = [t.name, ...t.rest];
      const found = names.map((n) => s.nodes[n]).filter((n): n is NodeObject => n !== undefined);
      const text = output({ apiVersion: "v1", items: found, kind: "List", metadata: { resourceVersion: "" } }, fmt, () => nodeTable(found, form));
      const missing = names.filter((n) => s.nodes[n] === undefined);
      if (missing.length === 0) return text;
      process.stdout.write(text);
      throw new Fail(missing.map((n) => `Error from server (NotFound): nodes "${n}" not found`).join("\n"));
    }
    const items = Object.values(s.nodes).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    if (items.length === 0 && (fmt === undefined || fmt === "wide")) {
      process.stderr.write("No resources found\n");
      return "";
    }
    return output({ apiVersion: "v1", items, kind: "List", metadata: { resourceVersion: "" } }, fmt, () => nodeTable(items, form));
  }
  const ns = flag(p, "n", "namespace") ?? "default";
  if (!t.name) {
    const items = Object.values(s.configMaps).filter((c) => c.metadata.namespace === ns);
    if (items.length === 0 && (fmt === undefined || fmt === "wide")) {
      // kubectl's table printer with nothing to print: a note on stderr, exit 0.
      process.stderr.write(`No resources found in ${ns} namespace.\n`);
      return "";
    }
    return output({ apiVersion: "v1", items, kind: "List", metadata: { resourceVersion: "" } }, fmt, () => configMapTable(items, form));
  }
  const c = getConfigMap(s, ns, t.name);
  return output(c, fmt, () => configMapTable([c], form));
}

/**
 * `annotate`/`label node N [N2...] k=v k2-` with kubectl's overwrite rule: as kubectl splits its arguments,
 * one holding `=` or ending in `-` is a change, the others name Nodes; every Node is changed, in order.
 */
async function annotateOrLabel(p: Parsed, what: "annotations" | "labels"): Promise<string> {
  const overwrite = kubectlBool(p, what === "labels" ? "label" : "annotate", "overwrite");
  const t = target(p.positional);
  if (t.kind !== "node" || !t.name) throw new Fail(`error: this lab stand-in supports ${what === "labels" ? "label" : "annotate"} on nodes only`);
  const isChange = (a: string) => a.includes("=") || a.endsWith("-");
  const names = [t.name, ...t.rest.filter((a) => !isChange(a))];
  const changes = t.rest.filter(isChange);
  // As kubectl (ContinueOnError): every Node it can change is changed, then its errors, exit 1.
  let out = "";
  const errors: string[] = [];
  for (const name of names) {
    try {
      out += await annotateOrLabelOne(name, changes, overwrite, what);
    } catch (e) {
      if (!(e instanceof Fail) || names.length === 1) throw e;
      errors.push(e.message);
    }
  }
  if (errors.length === 0) return out;
  process.stdout.write(out);
  throw new Fail(errors.join("\n"));
}

async function annotateOrLabelOne(name: string, changes: string[], overwrite: boolean, what: "annotations" | "labels"): Promise<string> {
  if (changes.length === 0) throw new Fail(`error: at least one ${what === "labels" ? "label" : "annotation"} update is required`);
  let onlyRemovals = true;
  await updateStore((s) => {
    const n = getNode(s, name);
    const map = n.metadata[what];
    for (const c of changes) {
      if (c.endsWith("-") && !c.includes("=")) {
        delete map[c.slice(0, -1)];
        continue;
      }
      onlyRemovals = false;
      const eq = c.indexOf("=");
      if (eq < 1) throw new Fail(`error: invalid ${what === "labels" ? "label" : "annotation"} spec: ${c}`);
      const k = c.slice(0, eq);
      const v = c.slice(eq + 1);
      if (!overwrite && k in map && map[k] !== v) {
        throw new Fail(
          what === "labels"
            ? `error: '${k}' already has a value (${map[k]}), and --overwrite is false`
            : `error: --overwrite is false but found the following declared annotation(s): '${k}' already has a value (${map[k]})`,
        );
      }
      map[k] = v;
    }
    n.metadata.resourceVersion = String(++s.revision);
  });
  if (what === "annotations") return `node/${name} annotated\n`;
  return `node/${name} ${onlyRemovals ? "unlabeled" : "labeled"}\n`;
}

/**
 * `cordon`/`uncordon N [N2...]`: each Node in order (kubectl takes several names). As kubectl, every Node is
 * looked up first: a missing one fails the command before any Node changes.
 */
async function setCordonAll(names: string[], on: boolean): Promise<string> {
  const t = target(["node", ...names]);
  const all = [t.name ?? "", ...t.rest];
  const s = await readStore();
  const missing = all.filter((n) => s.nodes[n] === undefined);
  if (missing.length > 0) throw new Fail(missing.map((n) => `Error from server (NotFound): nodes "${n}" not found`).join("\n"));
  let out = "";
  for (const name of all) out += await setCordon(name, on);
  return out;
}

async function setCordon(name: string, on: boolean): Promise<string> {
  return updateStore((s) => {
    const n = getNode(s, name);
    if (!!n.spec.unschedulable === on) return `node/${name} already ${on ? "cordoned" : "uncordoned"}\n`;
    if (on) n.spec.unschedulable = true;
    else delete n.spec.unschedulable;
    n.metadata.resourceVersion = String(++s.revision);
    return `node/${name} ${on ? "cordoned" : "uncordoned"}\n`;
  });
}

async function drain(p: Parsed): Promise<string> {
  const t = target(["node", ...p.positional]);
  const name = t.name;
  if (!name) throw new Fail("error: USAGE: drain NODE [flags]");
  process.stdout.write(await setCordon(name, true));
  await stepDuration("drain");
  const reason = (await readStore()).drainBlocks[name];
  if (reason !== undefined) {
    const timeout = flag(p, "timeout") ?? "0s";
    const secs = parseGoDuration(timeout) ?? 0;
    const wait = `error when waiting for pod "blocked-by-pdb" in namespace "lab" to terminate: global timeout reached: ${secs > 0 ? timeout : "0s"}`;
    process.stderr.write(
      `evicting pod lab/blocked-by-pdb\n` +
        `error when evicting pods/"blocked-by-pdb" -n "lab" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.\n` +
        (reason ? `(lab: ${reason})\n` : "") +
        `There are pending pods in node "${name}" when an error occurred: [${wait}]\n` +
        `error: unable to drain node "${name}" due to error: [${wait}], continuing command...\n` +
        `There are pending nodes to be drained:\n ${name}\n`,
    );
    throw new Fail(`error: [${wait}]`);
  }
  return `node/${name} drained\n`;
}

async function replace(p: Parsed): Promise<string> {
  const file = flag(p, "f", "filename");
  if (file === undefined) throw new Fail("error: must specify --filename to replace");
  const text = file === "-" ? fs.readFileSync(0, "utf8") : fs.readFileSync(file, "utf8");
  const obj = parse(text) as ConfigMapObject;
  const source = file === "-" ? "STDIN" : file;
  if (obj?.kind !== "ConfigMap") throw new Fail(`error: this lab stand-in replaces ConfigMaps only`);
  const ns = obj.metadata?.namespace ?? flag(p, "n", "namespace") ?? "default";
  const name = obj.metadata?.name;
  return updateStore((s) => {
    const cur = s.configMaps[`${ns}/${name}`];
    if (!cur) throw new Fail(`Error from server (NotFound): error when replacing "${source}": configmaps "${name}" not found`);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== "" && String(rv) !== cur.metadata.resourceVersion) {
      throw new Fail(
        `Error from server (Conflict): error when replacing "${source}": Operation cannot be fulfilled on configmaps "${name}": ` +
          "the object has been modified; please apply your changes to the latest version and try again",
      );
    }
    // A replace writes the whole object: labels, annotations and data are what it carries (absent: gone).
    cur.data = Object.fromEntries(Object.entries(obj.data ?? {}).map(([k, v]) => [k, String(v)]));
    for (const key of ["labels", "annotations"] as const) {
      const given = obj.metadata[key];
      if (given && Object.keys(given).length > 0) cur.metadata[key] = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(v)]));
      else delete cur.metadata[key];
    }
    cur.metadata.resourceVersion = String(++s.revision);
    return `configmap/${name} replaced\n`;
  });
}

async function deleteNode(p: Parsed): Promise<string> {
  const t = target(p.positional);
  if (t.kind !== "node" || !t.name) throw new Fail("error: this lab stand-in deletes nodes only");
  return updateStore((s) => {
    getNode(s, t.name!);
    delete s.nodes[t.name!];
    s.revision++;
    return `node "${t.name}" deleted\n`;
  });
}

/** `wait --for=condition=Ready node/N --timeout=60s` (Ready only). */
async function waitReady(p: Parsed): Promise<string> {
  const t = target(p.positional);
  const cond = flag(p, "for");
  if (t.kind !== "node" || !t.name || cond?.toLowerCase() !== "condition=ready") throw new Fail("error: this lab stand-in waits for condition=Ready on nodes only");
  const deadline = Date.now() + (parseGoDuration(flag(p, "timeout") ?? "30s") ?? 30) * 1000;
  for (;;) {
    const n = getNode(await readStore(), t.name);
    if (n.status.conditions.some((c) => c.type === "Ready" && c.status === "True")) return `node/${t.name} condition met\n`;
    if (Date.now() >= deadline) throw new Fail(`error: timed out waiting for the condition on nodes/${t.name}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Lab-only controls (host): `lab block-drain N [reason]`, `lab unblock-drain N`. */
async function lab(args: string[]): Promise<string> {
  const [verb, node, ...reason] = args;
  if (verb === "block-drain" && node) {
    await setDrainBlock(node, reason.join(" ") || "blocked by a PodDisruptionBudget");
    return `lab: drains of node ${node} now fail (PodDisruptionBudget)\n`;
  }
  if (verb === "unblock-drain" && node) {
    await setDrainBlock(node, undefined);
    return `lab: drains of node ${node} no longer blocked\n`;
  }
  throw new Fail("usage: kubectl lab block-drain <node> [reason] | kubectl lab unblock-drain <node>", 2);
}

/** Runs one kubectl command against the store; the caller has already checked credentials. */
export async function kubectlCommand(args: string[], opts: { allowLab: boolean }): Promise<number> {
  const p = parseArgs(args);
  const [verb, ...positional] = p.positional;
  p.positional = positional;
  let out: string;
  switch (verb) {
    case "get": out = await get(p); break;
    case "annotate": out = await annotateOrLabel(p, "annotations"); break;
    case "label": out = await annotateOrLabel(p, "labels"); break;
    case "cordon": out = await setCordonAll(positional, true); break;
    case "uncordon": out = await setCordonAll(positional, false); break;
    case "drain": out = await drain(p); break;
    case "replace": out = await replace(p); break;
    case "delete": out = await deleteNode(p); break;
    case "wait": out = await waitReady(p); break;
    case "lab":
      if (!opts.allowLab) throw new Fail(`error: unknown command "lab" for "kubectl"`);
      out = await lab(positional);
      break;
    default:
      throw new Fail(`error: unknown command "${verb ?? ""}" for "kubectl" (lab stand-in: get, annotate, label, cordon, uncordon, drain, replace, delete node, wait)`);
  }
  process.stdout.write(out);
  return 0;
}

/** kubectl's own flags that are not part of a command (removed before dispatch). */
export function kubeconfigFlag(args: string[]): { kubeconfig?: string; rest: string[] } {
  const rest: string[] = [];
  let kubeconfig: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--kubeconfig") kubeconfig = args[++i];
    else if (args[i].startsWith("--kubeconfig=")) kubeconfig = args[i].slice("--kubeconfig=".length);
    else rest.push(args[i]);
  }
  return { kubeconfig, rest };
}
