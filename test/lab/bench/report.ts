/** The readable table of a benchmark run (the JSON line is the same object, printed by bench.ts). */
import type { BenchResult } from "./result";
import type { StepFigures } from "./steps";

function row(cells: Array<string | number>, widths: number[]): string {
  return cells.map((c, i) => String(c).padEnd(widths[i] ?? 0)).join("  ").trimEnd();
}

function table(head: string[], rows: Array<Array<string | number>>): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? "").length)));
  return [row(head, widths), row(widths.map((w) => "-".repeat(w)), widths), ...rows.map((r) => row(r, widths))];
}

function criticalLines(s: StepFigures): string[] {
  return [
    `critical path (s on it by step kind): ${Object.entries(s.critical_path_by_kind).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    ...s.critical_path.map((l) => `  ${String(l.start_s).padStart(6)}  +${l.gap_s.toFixed(2)} wait  ${l.took_s.toFixed(2).padStart(5)} s  ${l.step}`),
  ];
}

export function renderTable(r: BenchResult): string {
  const out: string[] = [];
  const timed: Array<Array<string | number>> = [];
  if (r.provision) timed.push(["provision (3 cp + 20 workers)", r.provision.wall_s, r.provision.bound_s, r.provision.ratio]);
  if (r.upgrade) {
    if ("skipped" in r.upgrade) timed.push(["upgrade", "skipped", "", ""]);
    else for (const e of r.upgrade.entries) timed.push([`upgrade, maxUnavailableWorkers ${e.max_unavailable_workers}`, e.wall_s, e.bound_s, e.ratio]);
  }
  if (r.noop) timed.push(["noop (second apply)", r.noop.wall_s, "", ""]);
  if (timed.length > 0) out.push(...table(["scenario", "wall_s", "bound_s", "ratio"], timed), "");
  if (r.upgrade && "skipped" in r.upgrade) out.push(`upgrade skipped: ${r.upgrade.skipped}`, "");
  if (r.upgrade && "entries" in r.upgrade) {
    for (const e of r.upgrade.entries) out.push(`upgrade k=${e.max_unavailable_workers}: kubeadm runs ${JSON.stringify(e.kubeadm_runs)}`, ...criticalLines(e.steps), "");
  }
  if (r.noop) out.push(`noop: ${r.noop.ssh_sessions} SSH sessions in the sshd logs (runner counted ${r.noop.runner_ssh_sessions}), ${r.noop.commands_run} commands run`, "");
  if (r.provision) {
    const p = r.provision;
    out.push(`provision: ${p.resources} resources, bound with the default join window (maxConcurrentJoins 10) ${p.bound_with_join_window_s} s`);
    out.push(...table(["step", "count", "mean_s", "max_s", "sessions"],
      Object.entries(p.steps.kinds).map(([k, v]) => [k, v.count, v.mean_s, v.max_s, v.sessions])));
    out.push(`milestones (s since start): ${Object.entries(p.steps.milestones).map(([k, v]) => `${k} ${v}`).join(", ")}`);
    out.push(...criticalLines(p.steps), "");
  }
  if (r.ssh_sessions_per_node) {
    const s = r.ssh_sessions_per_node;
    out.push(`ssh sessions per node (fresh provision; ${s.counted}): max ${s.max} (${s.max_node}), mean ${s.mean}, total ${s.total}; "Starting session" lines ${s.starting_session_total}`);
    const byCount = new Map<number, string[]>();
    for (const [n, c] of Object.entries(s.per_node)) byCount.set(c, [...(byCount.get(c) ?? []), n]);
    for (const [c, ns] of [...byCount.entries()].sort((a, b) => b[0] - a[0])) out.push(`  ${String(c).padStart(3)}: ${ns.length > 4 ? `${ns.length} nodes (${ns.slice(0, 3).join(", ")}, ...)` : ns.join(", ")}`);
    out.push("");
  }
  if (r.calibration) out.push(`one SSH session running true: ${r.calibration.ssh_true_s} s; running the stand-in (kubeadm version): ${r.calibration.ssh_standin_kubeadm_version_s} s (median of ${r.calibration.runs})`, "");
  if (r.eval) {
    out.push(...table(["eval nodes", "seconds", "load_s", "eval_s", "peak_rss_mb", "resources", "inputs_mb", "eval_s/node", "marginal s/node", "marginal MB/node"],
      r.eval.sizes.map((e) => [e.nodes, e.seconds, e.load_s, e.eval_s, e.peak_rss_mb, e.resources, e.inputs_mb, e.eval_s_per_node, e.marginal_s_per_node ?? "", e.marginal_mb_per_node ?? ""])));
    out.push(`growth: ${r.eval.growth}`, "");
  }
  return out.join("\n");
}
