/** The readable report of a bench run (the `--json` line is the same object). */
import type { BareFigures } from "./eval";
import type { BenchResult, Compared, SessionFigures } from "./result";
import { describe } from "./stats";

function row(cells: Array<string | number>, widths: number[]): string {
  return cells.map((c, i) => String(c).padEnd(widths[i] ?? 0)).join("  ").trimEnd();
}

/** Lines of a plain-text table. */
export function table(head: string[], rows: Array<Array<string | number>>): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? "").length)));
  return [row(head, widths), row(widths.map((w) => "-".repeat(w)), widths), ...rows.map((r) => row(r, widths))];
}

/** "cp-1 18, cp-2 4, 21 others 4": sessions per node, grouped by count. */
export function sessionsLine(s: SessionFigures): string {
  const by = new Map<number, string[]>();
  for (const [n, c] of Object.entries(s.per_node)) by.set(c, [...(by.get(c) ?? []), n]);
  const parts = [...by.entries()].sort((a, b) => b[0] - a[0]).map(([c, ns]) => `${ns.length > 3 ? `${ns.length} nodes` : ns.join(", ")}: ${c}`);
  return `${parts.join("; ")} (total ${s.total}${s.same_in_every_run ? "" : ", differed between runs"})`;
}

function comparedRows(name: string, c: Compared): Array<Array<string | number>> {
  const rows: Array<Array<string | number>> = [[name, describe(c.component_s, " s"), describe(c.floor_s, " s"), describe(c.ratio, "x")]];
  const e = c.engine_floor;
  if (e !== undefined) rows.push([`${name}: the floor through the engine (${e.commands} Commands, --parallel ${e.parallel})`, describe(e.wall_s, " s"), describe(c.floor_s, " s"), describe(e.over_floor, "x")]);
  return rows;
}

function details(name: string, c: Compared): string[] {
  return [
    `${name}:`,
    `  kubeadm runs: component ${JSON.stringify(c.kubeadm_runs.component)}, floor ${JSON.stringify(c.kubeadm_runs.floor)}`,
    `  SSH sessions per node, component: ${sessionsLine(c.sessions.component)}`,
    `  SSH sessions per node, floor:     ${sessionsLine(c.sessions.floor)}`,
    `  engine steps (count per run, mean s): ${Object.entries(c.step_kinds).map(([k, v]) => `${k} ${v.count} x ${v.mean_s}`).join(", ")}`,
    `  the stack's state file after each run: ${c.state_kb.join(", ")} KB`,
    ...(c.before_first_command_s !== undefined ? [`  pulumi up before its first command: ${c.before_first_command_s} s; after its last: ${c.after_last_command_s} s (engine timestamps, +-1 s)${c.preview_s !== undefined ? `; its preview: ${c.preview_s} s` : ""}`] : []),
    ...(c.engine_floor !== undefined
      ? [
          `  the floor through the engine: kubeadm runs ${JSON.stringify(c.engine_floor.kubeadm_runs)}; SSH sessions per node: ${sessionsLine(c.engine_floor.sessions)}` +
            (c.engine_floor.before_first_command_s !== undefined ? `; before its first command ${c.engine_floor.before_first_command_s} s, after its last ${c.engine_floor.after_last_command_s} s` : "") +
            (c.engine_floor.preview_s !== undefined ? `; its preview ${c.engine_floor.preview_s} s` : ""),
          `  the component over the floor through the engine: ${describe(c.engine_floor.component_over_it, "x")}`,
        ]
      : []),
  ];
}

/** A reference's figures as one cell: evaluation s / CPU s / peak RSS MB. */
function figures(b: BareFigures): string {
  return `${b.eval_s} / ${b.cpu_s} / ${b.peak_rss_mb}`;
}

/** The report as text. */
export function renderReport(r: BenchResult): string {
  const out: string[] = [
    `machine: ${r.machine.cpus} x ${r.machine.cpu_model}, ${r.machine.memory_gb} GB, load ${r.machine.load_at_start.toFixed(2)} at start; node ${r.machine.node}; ${r.machine.ssh}; pulumi ${r.machine.pulumi}; commit ${r.machine.commit}; ${r.machine.date}`,
    `command: ${r.command}; setup: ${JSON.stringify(r.setup)}`,
    "",
  ];
  const rows: Array<Array<string | number>> = [];
  if (r.provision) rows.push(...comparedRows("provision", r.provision));
  for (const u of r.upgrade ?? []) rows.push(...comparedRows(`upgrade ${u.from} -> ${u.to}, maxUnavailableWorkers ${u.max_unavailable_workers}`, u));
  if (r.noop) rows.push(["second up, nothing changed", describe(r.noop.wall_s, " s"), "", ""]);
  if (rows.length > 0) out.push("median (min-max, spread) over the runs", ...table(["scenario", "component", "floor", "ratio"], rows), "");
  if (r.noop) out.push(`second up: SSH sessions ${r.noop.ssh_sessions_total.join(", ")}; commands run ${r.noop.commands_run.join(", ")}`, "");
  if (r.provision) out.push(...details("provision", r.provision), "");
  for (const u of r.upgrade ?? []) out.push(...details(`upgrade, maxUnavailableWorkers ${u.max_unavailable_workers}`, u), "");
  if (r.calibration) {
    const c = r.calibration;
    out.push(
      `one SSH session running true: ${describe(c.ssh_true_s, " s")} (OpenSSH's defaults, the floor's), ${describe(c.ssh_true_go_client_s, " s")} (the key exchanges of pulumi-command's Go client, the command provider's); with the stand-in's kubeadm version bundled: ${describe(c.ssh_kubeadm_version_bundle_s, " s")}, through tsx: ${describe(c.ssh_kubeadm_version_tsx_s, " s")}`,
      `one stand-in call: ${c.standin_call_bundle_s} s bundled, ${c.standin_call_tsx_s} s through tsx`,
      "",
    );
  }
  if (r.eval) {
    out.push(`program evaluation (${r.eval.args === "output" ? "controlPlaneEndpoint given as an Output" : "args from stack config"}), ${r.eval.runtime}:`);
    out.push(
      ...table(
        ["nodes", "process s", "load s", "eval s", "cpu s", "peak RSS MB", "resources", "inputs MB", "eval s/node", "bare Commands: eval s / cpu s / RSS MB", "the same, constructed as the component does", "the component's own Commands, inputs plain"],
        r.eval.sizes.map((e) => [e.nodes, describe(e.seconds), e.load_s.median, describe(e.eval_s), e.cpu_s.median, describe(e.peak_rss_mb), e.resources, e.inputs_mb, e.eval_s_per_node, figures(e.bare), figures(e.bare_quiet), figures(e.replay)]),
      ),
      `growth: ${r.eval.growth}`,
      "",
    );
  }
  if (r.eval_error) out.push(`program evaluation failed: ${r.eval_error}`, "");
  return out.join("\n");
}
