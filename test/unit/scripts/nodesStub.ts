/**
 * A kubectl stub over a few Nodes, for the drain and uncordon scripts run in bash: each Node is a file
 * `<dir>/nodes/<name>` holding `<unschedulable>|<cordon mark>` (`true` or empty, as kubectl's jsonpath
 * prints `.spec.unschedulable`), which `annotate`, `drain` (it cordons) and `uncordon` change as the API
 * server would. A Node without a file cannot be read. Every call is recorded (`calls`), the reads left
 * out of `writes`.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "fs";
import { join } from "path";
import { KUBECTL_STUB_TAG, sandbox } from "./bash";

export const CORDONED = "kubeadm.pulumi.com/cordoned";

/** A Node as the stub starts it: cordoned (`unschedulable`) and/or carrying this component's mark. */
export interface StubNode {
  unschedulable?: boolean;
  mark?: string;
}

export interface StubOptions {
  /** Nodes whose drain fails (a PodDisruptionBudget), printing `error: cannot evict pod web-0 (<node>): PodDisruptionBudget`. */
  failDrain?: string[];
  /**
   * Nodes whose drains must overlap: each one's drain waits (at most 20 s) until every one of them has
   * started, and fails if they did not (drains run one after another).
   */
  together?: string[];
  /** The same for uncordons: each one's `kubectl uncordon` waits (at most 20 s) until every one of them has started. */
  uncordonTogether?: string[];
  /** `annotate` and `uncordon` naming more than one Node fail (`error: conflict`), changing nothing; one Node at a time they work. */
  failBatched?: boolean;
  /**
   * Nodes whose patch `kubectl uncordon` fails as real kubectl does: it prints `error: unable to uncordon
   * node "<n>": ...` on stderr, leaves the Node unschedulable, and still exits 0.
   */
  uncordonIgnored?: string[];
  /** Nodes `kubectl drain` leaves schedulable, as real kubectl does when its cordon patch fails (it prints the error, evicts, exits 0). */
  drainNoCordon?: string[];
  /** While this file exists every call fails as kubectl does when the API server does not answer. */
  downWhile?: string;
  /** Each `uncordon` call lists $TMPDIR's entries into this file (what the script left there meanwhile). */
  tmpSeenBy?: string;
  /** `get nodes` answers `lists[i]` (`name|mark` lines) on its i-th call, the last one from then on, instead of the files. */
  lists?: string[];
}

/** The stub and its sandbox: `writes()` the calls other than reads, `nodes()` each Node's `unschedulable|mark` now. */
export function nodesStub(nodes: Record<string, StubNode>, opts: StubOptions = {}) {
  const box = sandbox();
  const dir = join(box.dir, "nodes");
  const started = join(box.dir, "started");
  mkdirSync(dir);
  mkdirSync(started);
  for (const [name, n] of Object.entries(nodes)) writeFileSync(join(dir, name), `${n.unschedulable ? "true" : ""}|${n.mark ?? ""}\n`);
  const calls = join(box.dir, "calls");
  const count = join(box.dir, "lists");
  const lists = opts.lists ?? [];
  const cases = lists.map((l, i) => `${i}) printf '%b' ${JSON.stringify(l)} ;;`).join(" ");
  box.stub(
    "kubectl",
    `shift 2; echo "$*" >>${calls}
D=${dir}
set_node() { printf '%s|%s\\n' "$2" "$3" >"$D/$1"; }
${KUBECTL_STUB_TAG}
${opts.downWhile ? `if [ -e ${opts.downWhile} ]; then echo "The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?" >&2; exit 1; fi` : ""}
case "$1" in
get)
  if [ "$2" = nodes ] && [ $# -gt 2 ] && [ "$3" != -o ]; then
    # Named Nodes (kubectl's List of those it found): name|unschedulable|mark each; exit 1 for a missing one.
    shift 2; rc=0
    while [ $# -gt 0 ] && [ "$1" != -o ]; do
      if [ -f "$D/$1" ]; then IFS='|' read -r u m <"$D/$1"; tagged "$1" "$u" "$m"; else echo "Error from server (NotFound): nodes \\"$1\\" not found" >&2; rc=1; fi
      shift
    done
    exit $rc
  fi
  if [ "$2" = nodes ]; then
    if [ ${lists.length} -gt 0 ]; then i=$(cat ${count} 2>/dev/null || echo 0); echo $((i + 1)) >${count}; [ "$i" -lt ${lists.length} ] || i=${lists.length - 1}; case $i in ${cases} esac | sed "s/|/$tag/g; s/^/$tag/"; exit 0; fi
    for f in "$D"/*; do IFS='|' read -r u m <"$f"; tagged "$(basename "$f")" "$m"; done; exit 0
  fi
  [ -f "$D/$3" ] || { echo "Error from server (NotFound): nodes \\"$3\\" not found" >&2; exit 1; }
  IFS='|' read -r u m <"$D/$3"
  case "$*" in *metadata.name*) tagged "$3" "$u" "$m" ;; *unschedulable*annotations*) printf '%s|%s' "$u" "$m" ;; *unschedulable*) printf '%s' "$u" ;; *) printf '%s' "$m" ;; esac ;;
annotate)
  # annotate --overwrite node <name>... <key>=<value>|<key>-
  shift 3; spec=\${!#}
  if ${opts.failBatched ? "true" : "false"} && [ $# -gt 2 ]; then echo "error: conflict" >&2; exit 1; fi
  while [ $# -gt 1 ]; do
    [ -f "$D/$1" ] || { echo "Error from server (NotFound): nodes \\"$1\\" not found" >&2; exit 1; }
    IFS='|' read -r u m <"$D/$1"
    case "$spec" in ${CORDONED}-) set_node "$1" "$u" "" ;; ${CORDONED}=*) set_node "$1" "$u" "\${spec#*=}" ;; esac
    shift
  done ;;
drain)
  touch ${started}/"$2"
  for other in ${(opts.together ?? []).join(" ")}; do
    n=0; until [ -f ${started}/"$other" ]; do n=$((n + 1)); [ $n -lt 200 ] || { echo "error: $other not drained beside $2" >&2; exit 1; }; sleep 0.1; done
  done
  case " ${(opts.failDrain ?? []).join(" ")} " in *" $2 "*) echo "error: cannot evict pod web-0 ($2): PodDisruptionBudget" >&2; exit 1 ;; esac
  case " ${(opts.drainNoCordon ?? []).join(" ")} " in *" $2 "*) echo "error: unable to cordon node \\"$2\\": conflict" >&2; echo "node/$2 drained"; exit 0 ;; esac
  IFS='|' read -r u m <"$D/$2"; set_node "$2" true "$m" ;;
uncordon)
  shift
  if ${opts.failBatched ? "true" : "false"} && [ $# -gt 1 ]; then echo "error: conflict" >&2; exit 1; fi
  for n in "$@"; do touch ${started}/uncordon-"$n"; done
  for n in "$@"; do
    for other in ${(opts.uncordonTogether ?? []).join(" ")}; do
      k=0; until [ -f ${started}/uncordon-"$other" ]; do k=$((k + 1)); [ $k -lt 200 ] || { echo "error: $other not uncordoned beside $n" >&2; exit 1; }; sleep 0.1; done
    done
    ${opts.tmpSeenBy ? `ls -A "\${TMPDIR:-/tmp}" >>${opts.tmpSeenBy}` : ":"}
    case " ${(opts.uncordonIgnored ?? []).join(" ")} " in *" $n "*) echo "error: unable to uncordon node \\"$n\\": conflict" >&2; continue ;; esac
    IFS='|' read -r u m <"$D/$n"; set_node "$n" "" "$m"
  done ;;
esac`,
  );
  const log = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []);
  return {
    box,
    calls: log,
    writes: () => log().filter((c) => !c.startsWith("get ")),
    nodes: () => Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8").trim()])),
    lookups: () => (existsSync(count) ? Number(readFileSync(count, "utf8")) : 0),
  };
}
