/**
 * TEST DOUBLE helper (lab stand-in, not real kubectl): the subset of kubectl's JSONPath templates the
 * project uses: `{.a.b}`, escaped dots (`{.metadata.annotations.kubeadm\.alpha\.kubernetes\.io/cri-socket}`),
 * `['key']`, `[n]`, `[*]`, `[?(@.type=="Ready")]`, `{range EXPR}...{end}`, string literals `{"\n"}`.
 * Missing keys print nothing (kubectl's default allowMissingKeys=true).
 */
type Node = { kind: "text"; text: string } | { kind: "path"; expr: string } | { kind: "range"; expr: string; body: Node[] };

function parseTemplate(t: string): Node[] {
  const stack: Node[][] = [[]];
  const ranges: { expr: string }[] = [];
  let i = 0;
  while (i < t.length) {
    const open = t.indexOf("{", i);
    if (open < 0) {
      stack[stack.length - 1].push({ kind: "text", text: t.slice(i) });
      break;
    }
    if (open > i) stack[stack.length - 1].push({ kind: "text", text: t.slice(i, open) });
    let j = open + 1;
    let inStr = false;
    for (; j < t.length; j++) {
      if (t[j] === "\\") { j++; continue; }
      if (t[j] === '"') inStr = !inStr;
      if (t[j] === "}" && !inStr) break;
    }
    if (j >= t.length) throw new Error(`unclosed action`);
    const action = t.slice(open + 1, j).trim();
    i = j + 1;
    if (action.startsWith("range ")) {
      ranges.push({ expr: action.slice(6).trim() });
      stack.push([]);
    } else if (action === "end") {
      const body = stack.pop();
      const r = ranges.pop();
      if (!body || !r) throw new Error("not in range, nothing to end");
      stack[stack.length - 1].push({ kind: "range", expr: r.expr, body });
    } else if (action.startsWith('"')) {
      stack[stack.length - 1].push({ kind: "text", text: JSON.parse(action) as string });
    } else {
      stack[stack.length - 1].push({ kind: "path", expr: action });
    }
  }
  if (stack.length !== 1) throw new Error("unclosed range");
  return stack[0];
}

type Step = { key: string } | { index: number } | { all: true } | { filter: { path: string[]; value: string } };

function parsePath(expr: string): Step[] {
  const steps: Step[] = [];
  let i = expr.startsWith("@") || expr.startsWith("$") ? 1 : 0;
  while (i < expr.length) {
    const c = expr[i];
    if (c === ".") {
      i++;
      let key = "";
      while (i < expr.length && expr[i] !== "." && expr[i] !== "[") {
        if (expr[i] === "\\" && i + 1 < expr.length) { key += expr[i + 1]; i += 2; continue; }
        key += expr[i++];
      }
      if (key !== "") steps.push({ key });
    } else if (c === "[") {
      const close = expr.indexOf("]", i);
      const inner = expr.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === "*") steps.push({ all: true });
      else if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ key: inner.slice(1, -1) });
      else {
        const m = /^\?\(@((?:\.[\w\-/\\.]+?)+)\s*==\s*["'](.*)["']\)$/.exec(inner);
        if (!m) throw new Error(`unsupported JSONPath: ${inner}`);
        steps.push({ filter: { path: m[1].slice(1).split("."), value: m[2] } });
      }
    } else {
      throw new Error(`unrecognized character in action: ${c}`);
    }
  }
  return steps;
}

function evalPath(root: unknown, expr: string): unknown[] {
  let cur: unknown[] = [root];
  for (const s of parsePath(expr)) {
    const next: unknown[] = [];
    for (const v of cur) {
      if ("key" in s) {
        if (v && typeof v === "object" && !Array.isArray(v) && s.key in (v as object)) next.push((v as Record<string, unknown>)[s.key]);
      } else if ("index" in s) {
        if (Array.isArray(v)) {
          const x = v[s.index < 0 ? v.length + s.index : s.index];
          if (x !== undefined) next.push(x);
        }
      } else if ("all" in s) {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === "object") next.push(...Object.values(v));
      } else {
        if (Array.isArray(v)) {
          for (const item of v) {
            let x: unknown = item;
            for (const k of s.filter.path) x = x && typeof x === "object" ? (x as Record<string, unknown>)[k] : undefined;
            if (x !== undefined && String(x) === s.filter.value) next.push(item);
          }
        }
      }
    }
    cur = next;
  }
  return cur;
}

function show(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function run(nodes: Node[], root: unknown): string {
  let out = "";
  for (const n of nodes) {
    if (n.kind === "text") out += n.text;
    else if (n.kind === "path") out += evalPath(root, n.expr).map(show).join(" ");
    else for (const item of evalPath(root, n.expr)) out += run(n.body, item);
  }
  return out;
}

export function jsonpath(template: string, obj: unknown): string {
  return run(parseTemplate(template), obj);
}
