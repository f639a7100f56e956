# Bash functions shared by pulumi-kubeadm's node scripts, installed once per node at a content-addressed
# path (library.ts) and loaded by every script. Every script runs with `set -euo pipefail` and sets
# PK_NODE (the node's name, for messages) and PK_STATE_DIR first.
#
# State on a node, under $PK_STATE_DIR (/var/lib/pulumi-kubeadm, mode 0700):
#   run/<action>/{pid,rc,log,done}   a detached kubeadm run (pk_run_once)
#   run/<action>/clean-before        init/join found no kubeadm state before their first run (a failed run may be reset)
#   backup/<UTC timestamp>/<path>    each file as it was before it was replaced or removed
#   owners/<step id>                 the Pulumi resources that claim what a step made here, one name a line
#                                    (pk_claim); a destructive delete acts only when it holds the last claim,
#                                    which it drops once its work is done (pk_release, pk_release_done)

# pk_fail MESSAGE...: print "pulumi-kubeadm: node <name>: MESSAGE" on stderr and exit 1.
pk_fail() {
  printf 'pulumi-kubeadm: node %s: %s\n' "$PK_NODE" "$*" >&2
  exit 1
}

# pk_kubectl ARG...: kubectl with kubeadm's admin kubeconfig ($PK_ADMIN_KUBECONFIG, on a control-plane node),
# as the cluster-side steps run it on the first control-plane node.
pk_kubectl() {
  kubectl --kubeconfig "$PK_ADMIN_KUBECONFIG" "$@"
}

# pk_get_node KUBECONFIG NODE OUTPUT: `kubectl get node NODE -o OUTPUT` with KUBECONFIG, its output on
# stdout. Returns 0; or 1 when the API server answers that it has no such Node (kubectl's `nodes "NODE"
# not found`, nothing printed); or 2 when the Node cannot be read (the API server does not answer, refuses
# the credentials, a proxy's 404), kubectl's error on stderr (masked), or mktemp failed (said so).
pk_get_node() {
  local out err rc=0
  err=$(mktemp) || { printf 'pulumi-kubeadm: node %s: mktemp failed, so the Node %s was not read\n' "$PK_NODE" "$2" >&2; return 2; }
  out=$(kubectl --kubeconfig "$1" get node "$2" -o "$3" 2>"$err") || rc=$?
  if [ "$rc" = 0 ]; then
    rm -f "$err"
    printf '%s' "$out"
    return 0
  fi
  if grep -qF "(NotFound): nodes \"$2\" not found" "$err"; then rc=1; else rc=2; pk_mask <"$err" >&2; fi
  rm -f "$err"
  return "$rc"
}

# pk_node_registered NODE [removal]: true when the API server has the Node NODE, false when it answers
# that it has none; when the Node cannot be read, fails (kubectl's error above it), nothing done, so that a
# delete or forget is retried rather than skipped. With `removal` (a destructive delete) and no list of
# the cluster's nodes on this node (members.ts: the members record's delete removed it, so the whole
# cluster is being destroyed), it says so and counts as no Node instead: `pulumi destroy` of a cluster
# whose API server is gone still resets every machine.
pk_node_registered() {
  local rc=0
  pk_get_node "$PK_ADMIN_KUBECONFIG" "$1" name >/dev/null || rc=$?
  case $rc in 0) return 0 ;; 1) return 1 ;; esac
  if [ "${2:-}" = removal ] && [ ! -f "$PK_STATE_DIR/members" ]; then
    printf 'pulumi-kubeadm: node %s: could not read the Node %s from the API server (above); no list of the nodes here, so the cluster is being destroyed: going on without it\n' "$PK_NODE" "$1" >&2
    return 1
  fi
  pk_fail "could not read the Node $1 from the API server (kubectl's error above), nothing done: run pulumi up again once kubectl on the first control-plane node reaches it"
}

# pk_mask: filter hiding bootstrap tokens and 64-hex-digit values (certificate keys) in log text.
pk_mask() {
  sed -E 's/[a-z0-9]{6}\.[a-z0-9]{16}/<bootstrap-token>/g; s/[0-9a-f]{64}/<redacted>/g'
}

# pk_started PID: the start time of process PID (clock ticks since boot, /proc/PID/stat field 22), or
# nothing when there is no such process. A pid together with its start time names one process for good,
# even after the pid is reused (a reboot, a long time).
pk_started() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  set -- $stat
  printf '%s' "${20:-}"
}

# pk_alive PID STARTED: true while that very process runs (STARTED empty: any process with that pid).
pk_alive() {
  if [ -z "$2" ]; then kill -0 "$1" 2>/dev/null; else [ "$(pk_started "$1")" = "$2" ]; fi
}

# pk_run_alive DIR: true while the process that DIR/pid records (its pid AND start time) runs.
pk_run_alive() {
  local pid="" started=""
  if [ -f "$1/pid" ]; then read -r pid started <"$1/pid" || true; fi
  [ -n "$pid" ] && [ -n "$started" ] && pk_alive "$pid" "$started"
}

# pk_run_settle DIR: an exit status the detached run wrote but did not rename into DIR/rc (it died in
# between) is its exit status.
pk_run_settle() {
  if [ ! -f "$1/rc" ] && [ -f "$1/rc.tmp" ] && ! pk_run_alive "$1"; then mv -f "$1/rc.tmp" "$1/rc"; fi
}

# pk_run_once NAME COMMAND...: run COMMAND at most once to success on this node. It runs detached (own
# session, output to a log), so a lost SSH connection does not kill kubeadm half-way. A re-run waits for
# a run still going (same pid AND start time), accepts one that finished after the connection was lost,
# and starts again only after a failure. Success is marked by run/NAME/done; a run seen gone without an
# exit status (killed) is recorded as the exit status `killed`.
pk_run_once() {
  local name=$1; shift
  local dir=$PK_STATE_DIR/run/$name pid="" started="" rc
  if [ -f "$dir/done" ]; then
    printf 'pulumi-kubeadm: node %s: %s already done, nothing to do\n' "$PK_NODE" "$name" >&2
    return 0
  fi
  mkdir -p "$dir" && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/run" "$dir"
  pk_run_settle "$dir"
  if [ -f "$dir/rc" ] && [ "$(cat "$dir/rc")" = 0 ]; then
    printf 'pulumi-kubeadm: node %s: %s finished after an earlier connection was lost\n' "$PK_NODE" "$name" >&2
  elif [ ! -f "$dir/rc" ] && pk_run_alive "$dir"; then
    printf 'pulumi-kubeadm: node %s: %s still running from an earlier connection; waiting\n' "$PK_NODE" "$name" >&2
  else
    rm -f "$dir/rc" "$dir/rc.tmp" "$dir/pid"
    setsid bash -c '"$@" >"$0/log" 2>&1; echo $? >"$0/rc.tmp"; mv -f "$0/rc.tmp" "$0/rc"' "$dir" "$@" </dev/null >/dev/null 2>&1 &
    pid=$!
    started=$(pk_started "$pid")
    echo "$pid $started" >"$dir/pid.tmp" && mv -f "$dir/pid.tmp" "$dir/pid"
  fi
  while [ ! -f "$dir/rc" ]; do
    if ! pk_run_alive "$dir" && [ ! -f "$dir/rc" ]; then
      pk_run_settle "$dir"
      if [ ! -f "$dir/rc" ]; then
        echo killed >"$dir/rc.killed" && mv -f "$dir/rc.killed" "$dir/rc"
        pk_fail "$name was killed before it finished; log: $dir/log"
      fi
    fi
    sleep 0.1
  done
  rc=$(cat "$dir/rc")
  if [ "$rc" != 0 ]; then
    tail -n 25 "$dir/log" | pk_mask >&2
    pk_fail "$name failed (exit $rc); full log on the node: $dir/log"
  fi
  touch "$dir/done"
}

# pk_kubeadm_clean: true when the node holds no kubeadm state (no kubelet.conf, admin.conf, CA or static
# Pod manifest, an empty /var/lib/etcd): what kubeadm init/join's preflight wants to find.
pk_kubeadm_clean() {
  local f
  for f in /etc/kubernetes/kubelet.conf /etc/kubernetes/admin.conf /etc/kubernetes/pki/ca.crt /etc/kubernetes/manifests/*.yaml; do
    [ ! -e "$f" ] || return 1
  done
  [ -z "$(ls -A /var/lib/etcd 2>/dev/null)" ]
}

# pk_no_endpoint_flag_elsewhere: with NodeLocalCRISocket in effect the kubelet takes its endpoint from
# config.yaml (from instance-config.yaml); a --container-runtime-endpoint given anywhere else the kubelet
# unit reads (a systemd drop-in, the unit itself, /etc/default/kubelet, /etc/sysconfig/kubelet) beats it,
# as the flag in kubeadm-flags.env did in kubeadm 1.32. Fails naming the file; comment lines do not count.
pk_no_endpoint_flag_elsewhere() {
  local f
  for f in /etc/systemd/system/kubelet.service.d/*.conf /etc/systemd/system/kubelet.service \
    /run/systemd/system/kubelet.service.d/*.conf /usr/lib/systemd/system/kubelet.service.d/*.conf \
    /lib/systemd/system/kubelet.service.d/*.conf /etc/default/kubelet /etc/sysconfig/kubelet; do
    [ -f "$f" ] || continue
    if grep -Ev '^[[:space:]]*[#;]' "$f" | grep -q -- 'container-runtime-endpoint'; then
      pk_fail "$f sets --container-runtime-endpoint, which beats instance-config.yaml (NodeLocalCRISocket): remove it from that file, the node's criSocket sets the endpoint; nothing was changed"
    fi
  done
}

# pk_snapshot PATH...: one line per file, "pk-file <path> <sha256|absent> <base64|->", read by
# files.ts (parseFileSnapshot).
pk_snapshot() {
  local f
  for f in "$@"; do
    if [ -f "$f" ]; then
      printf 'pk-file %s %s %s\n' "$f" "$(sha256sum <"$f" | cut -d' ' -f1)" "$(base64 -w0 <"$f")"
    else
      printf 'pk-file %s absent -\n' "$f"
    fi
  done
}

# pk_apply_files: read file changes on stdin (files.ts, encodeFileChanges), one a line:
#   pk-write <path> <expected sha256|absent|any> <octal mode> <base64 content>   (any: no compare-and-swap)
#   pk-remove <path> <expected sha256>
# First every file is compared with what the plan read (compare-and-swap): a file already as wanted is
# skipped (a re-run repeats nothing); a file neither as read nor as wanted makes the step refuse before
# anything changes. Then each change: timestamped backup, temp file in the same directory, fsync,
# rename, fsync of the directory. Sets PK_CHANGED (count). Each change is journaled, before the file is
# touched, in $PK_STATE_DIR/pending ("<path> <backup|absent>" lines): until pk_files_settled removes it,
# the changes are not yet checked, so a step that died half-way is finished (restart, check, or restore
# from this journal) by the next run even though the files already look as wanted.
pk_apply_files() {
  local op path expect mode data cur want i n ts dir tmp backup
  local -a ops=() paths=() expects=() modes=() datas=() todo=()
  while read -r op path expect mode data || [ -n "$op" ]; do
    [ -n "$op" ] || continue
    ops+=("$op"); paths+=("$path"); expects+=("$expect"); modes+=("$mode"); datas+=("$data")
  done
  n=${#ops[@]}
  PK_CHANGED=0
  for ((i = 0; i < n; i++)); do
    path=${paths[i]}
    cur=absent
    if [ -e "$path" ]; then cur=$(sha256sum <"$path" | cut -d' ' -f1); fi
    case ${ops[i]} in
      pk-write) want=$(printf '%s' "${datas[i]}" | base64 -d | sha256sum | cut -d' ' -f1) ;;
      pk-remove) want=absent ;;
      *) pk_fail "unknown file operation ${ops[i]}" ;;
    esac
    if [ "$cur" = "$want" ]; then continue; fi
    if [ "${expects[i]}" != any ] && [ "$cur" != "${expects[i]}" ]; then
      pk_fail "$path changed since it was read (expected ${expects[i]}, found $cur); refusing to overwrite it. Run the step again to read it anew."
    fi
    todo+=("$i")
  done
  ts=$(date -u +%Y%m%dT%H%M%S.%NZ)
  for i in ${todo[@]+"${todo[@]}"}; do
    path=${paths[i]}
    dir=$(dirname "$path")
    backup=absent
    if [ -e "$path" ]; then
      backup=$PK_STATE_DIR/backup/$ts$path
      mkdir -p "$(dirname "$backup")"
      chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/backup"
      cp -p "$path" "$backup"
      sync "$backup"
    fi
    mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"
    printf '%s %s\n' "$path" "$backup" >>"$PK_STATE_DIR/pending"
    sync "$PK_STATE_DIR/pending"
    if [ "${ops[i]}" = pk-write ]; then
      mkdir -p "$dir"
      tmp=$(mktemp "$dir/.pulumi-kubeadm.XXXXXX")
      printf '%s' "${datas[i]}" | base64 -d >"$tmp"
      chmod "${modes[i]}" "$tmp"
      sync "$tmp"
      mv -f "$tmp" "$path"
    else
      rm -f "$path"
    fi
    sync "$dir"
    PK_CHANGED=$((PK_CHANGED + 1))
    printf 'pulumi-kubeadm: node %s: %s %s (backup: %s)\n' "$PK_NODE" "${ops[i]#pk-}" "$path" "$backup" >&2
  done
}

# pk_files_pending: true when changes journaled by pk_apply_files (this run or a run that died) are
# not settled yet.
pk_files_pending() {
  [ -s "$PK_STATE_DIR/pending" ]
}

# pk_files_settled: the journaled changes are checked; forget them.
pk_files_settled() {
  rm -f "$PK_STATE_DIR/pending"
}

# pk_restore: undo every journaled change, newest first, each file put back atomically; then forget them.
pk_restore() {
  local path backup tmp
  [ -f "$PK_STATE_DIR/pending" ] || return 0
  while read -r path backup; do
    [ -n "$path" ] || continue
    if [ "$backup" = absent ]; then
      rm -f "$path"
    else
      tmp=$(mktemp "$(dirname "$path")/.pulumi-kubeadm.XXXXXX")
      cp -p "$backup" "$tmp"
      sync "$tmp"
      mv -f "$tmp" "$path"
    fi
    sync "$(dirname "$path")"
    printf 'pulumi-kubeadm: node %s: restored %s\n' "$PK_NODE" "$path" >&2
  done < <(tac "$PK_STATE_DIR/pending")
  pk_files_settled
}

# pk_kubelet_healthy SECONDS: restart the kubelet, then watch `systemctl is-active kubelet` for SECONDS
# (at least one check): a kubelet that crashes on a bad file shows as failed or auto-restarting within
# that window. Returns 1 when it is not active at any check.
pk_kubelet_healthy() {
  local settle=$1 end
  systemctl daemon-reload >/dev/null 2>&1 || true
  systemctl restart kubelet || return 1
  end=$((SECONDS + settle))
  while :; do
    systemctl is-active --quiet kubelet || return 1
    [ "$SECONDS" -lt "$end" ] || return 0
    sleep 1
  done
}

# pk_claim SCOPE OWNER: record that the resource named OWNER (its logical name, `<cluster>-<step id>`)
# made or took over what the step SCOPE guards on this host. One line per create: a replacement made
# before the old resource is deleted (`pulumi up --replace`), or a renamed resource, adds its own line
# before the old one's delete removes its line.
pk_claim() {
  local file=$PK_STATE_DIR/owners/$1
  mkdir -p "$PK_STATE_DIR/owners" && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/owners"
  printf '%s\n' "$2" >>"$file"
  sync "$file"
}

# pk_claim_once SCOPE OWNER [FORMER...]: as pk_claim, unless OWNER already holds a claim (an update of
# the same resource, or a resource made before claims existed, which takes its claim on its next
# update). Claims under a FORMER name of the same resource (a renamed cluster with aliases) become
# OWNER's first.
pk_claim_once() {
  local scope=$1 owner=$2 file f tmp
  shift 2
  file=$PK_STATE_DIR/owners/$scope
  for f in "$@"; do
    if grep -qxF -- "$f" "$file" 2>/dev/null; then
      tmp=$(mktemp "$file.XXXXXX")
      PK_FROM=$f PK_TO=$owner awk '$0 == ENVIRON["PK_FROM"] { print ENVIRON["PK_TO"]; next } { print }' "$file" >"$tmp"
      sync "$tmp" && mv -f "$tmp" "$file"
    fi
  done
  grep -qxF -- "$owner" "$file" 2>/dev/null || pk_claim "$scope" "$owner"
}

# pk_release SCOPE OWNER: for a delete. True (the delete may act) only when OWNER holds the last claim,
# which then stays until the delete's work is done and pk_release_done drops it: a delete that fails
# midway (a failed drain or reset, a lost connection) keeps it, so the retry acts again. Otherwise drops
# OWNER's claim if it held one, says why nothing is done (OWNER never made it, or another resource, such
# as the replacement of a replaced or renamed resource, still claims it) and returns 1.
pk_release() {
  local file=$PK_STATE_DIR/owners/$1 tmp
  if [ ! -f "$file" ] || ! grep -qxF -- "$2" "$file"; then
    printf 'pulumi-kubeadm: node %s: %s holds no claim on %s here (another resource made it, or nothing did); nothing done\n' "$PK_NODE" "$2" "$1" >&2
    return 1
  fi
  tmp=$(mktemp "$file.XXXXXX")
  PK_OWNER=$2 awk '!gone && $0 == ENVIRON["PK_OWNER"] { gone = 1; next } { print }' "$file" >"$tmp"
  if [ ! -s "$tmp" ]; then
    rm -f "$tmp"
    return 0
  fi
  sync "$tmp" && mv -f "$tmp" "$file"
  printf 'pulumi-kubeadm: node %s: %s is still claimed by %s; nothing done\n' "$PK_NODE" "$1" "$(sort -u "$file" | paste -sd, -)" >&2
  return 1
}

# pk_release_done SCOPE: the last claim on SCOPE dropped, once the delete that pk_release let act has
# done its work.
pk_release_done() {
  rm -f "$PK_STATE_DIR/owners/$1"
}

# pk_nodes_lines FIELDS [NODE...]: the named Nodes (every Node when none is named) read in ONE kubectl call
# (the admin kubeconfig), printed as one `<name>|<field>|<field>...` line each; FIELDS is their jsonpath
# expressions joined by `|` (none holds a `|` itself). kubectl prints an annotation's value as it is
# stored, so a value holding a newline prints lines of its own, one of which could pass for another Node's
# line (`w1|true|...`), and a value holding a `|` could pass for two fields: kubectl is asked for each
# Node's line led by a tag made at random for this call, and for the same tag between the fields; only
# the lines it leads are read (a value's further lines are cut off, as a read of one Node cuts them off),
# a `|` inside a value is printed as `/`, and then the tags between the fields as `|`. Returns kubectl's
# exit status (it prints the Nodes it found and exits 1 for the others); kubectl's stderr is left to the
# caller.
pk_nodes_lines() {
  local fields tag out line rc=0
  tag=$(cat /proc/sys/kernel/random/uuid) || return 2
  fields=${1//|/$tag}
  shift
  if [ $# -eq 1 ]; then
    # One named Node: kubectl gives the Node itself, not a List.
    out=$(pk_kubectl get node "$1" -o jsonpath="$tag{.metadata.name}$tag$fields{\"\n\"}" </dev/null) || rc=$?
  else
    out=$(pk_kubectl get nodes "$@" -o jsonpath="{range .items[*]}$tag{.metadata.name}$tag$fields{\"\n\"}{end}" </dev/null) || rc=$?
  fi
  while IFS= read -r line; do
    if [[ $line == "$tag"* ]]; then
      line=${line#"$tag"}
      line=${line//|//}
      printf '%s\n' "${line//"$tag"/|}"
    fi
  done <<<"$out"
  return "$rc"
}

# pk_read_seen NODE...: every named Node read in ONE kubectl call (pk_nodes_lines) into the global
# associative arrays seen_u[<node>] (.spec.unschedulable: true or empty) and seen_m[<node>] (what the
# jsonpath $PK_CORDON_MARK gives: this component's cordon mark, empty when none). A Node the call could not read is
# left out of both (kubectl prints the Nodes it found and exits 1 for the others, or prints nothing when
# the API server does not answer). Never fails and prints nothing: the caller reads such a Node again on
# its own and fails naming it. An earlier read's entries for the named Nodes are dropped first.
pk_read_seen() {
  local out n u m
  declare -gA seen_u seen_m
  # What an earlier read said of these Nodes does not stand in for this one.
  for n in "$@"; do unset "seen_u[$n]" "seen_m[$n]"; done
  out=$(pk_nodes_lines "{.spec.unschedulable}|$PK_CORDON_MARK" "$@" 2>/dev/null) || true
  while IFS='|' read -r n u m; do
    if [ -n "$n" ]; then seen_u[$n]=$u; seen_m[$n]=$m; fi
  done <<<"$out"
}

# pk_uncordoned NODE: true when NODE is schedulable now, read again after `kubectl uncordon`, which exits 0
# when its patch fails (it prints the error); false (1) when it is still cordoned, 3 when it cannot be read.
pk_uncordoned() {
  local u
  u=$(pk_kubectl get node "$1" -o jsonpath='{.spec.unschedulable}' </dev/null) || return 3
  [ "$u" != true ]
}

# pk_uncordon_checked NODE: `kubectl uncordon NODE` (its output on stderr), then NODE read again
# (pk_uncordoned): fails (pk_fail, naming NODE) when it is still cordoned or cannot be read, before the
# caller removes this component's cordon mark.
pk_uncordon_checked() {
  pk_kubectl uncordon "$1" >&2 </dev/null || true
  pk_uncordoned "$1" || { PK_NODE=$1; pk_fail "could not uncordon the node; it keeps this component's cordon mark"; }
}

# pk_uncordon_one NODE: uncordon NODE when it carries this component's cordon mark (the annotation
# $PK_CORDONED_ANNOTATION, read with the jsonpath $PK_CORDON_MARK, values the library is installed with),
# and remove the mark; on stdout `NODE: uncordoned` or `NODE: not cordoned by this component`, kubectl's
# output on stderr. Returns 3 when the Node cannot be read, 4 when kubectl could not uncordon it (the Node
# read again is still unschedulable: kubectl uncordon exits 0 when its patch fails) or remove the mark; the mark is
# removed only from a Node that is schedulable again.
pk_uncordon_one() {
  local seen unschedulable cordoned
  seen=$(pk_kubectl get node "$1" -o jsonpath="{.spec.unschedulable}|$PK_CORDON_MARK" </dev/null) || return 3
  IFS='|' read -r unschedulable cordoned <<<"$seen" || true
  if [ -z "$cordoned" ]; then echo "$1: not cordoned by this component"; return 0; fi
  if [ "$unschedulable" = true ]; then
    pk_kubectl uncordon "$1" >&2 </dev/null || return 4
    pk_uncordoned "$1" || return $(($? == 3 ? 3 : 4))
  fi
  pk_kubectl annotate --overwrite node "$1" "$PK_CORDONED_ANNOTATION-" >&2 </dev/null || return 4
  echo "$1: uncordoned"
}

# pk_uncordon_marked NODE...: uncordon each NODE that carries this component's cordon mark
# ($PK_CORDONED_ANNOTATION, read with the jsonpath $PK_CORDON_MARK) and remove it; a Node without it (an operator's cordon, or
# none) is left as it is. The Nodes read in one call (pk_read_seen), then ONE `kubectl uncordon` for those
# marked and unschedulable, read again in one call (kubectl uncordon exits 0 when a patch fails), and ONE
# `kubectl annotate` removing the mark from every marked one that is schedulable now, whatever their number: it
# never leaves a Node that is still cordoned. A Node the first read missed, one still unschedulable, and
# every Node of a refused annotate goes through pk_uncordon_one, one after another (the rare path). Then,
# in NODE order, each one's line on stdout (`NODE: uncordoned`, `NODE: not cordoned by this component`;
# none for a Node that failed); kubectl's output on stderr as each call prints it. Fails (pk_fail, naming
# the first such NODE in order) once every Node is done: `cannot read the Node`, or `could not uncordon
# the node`. Reads nothing from stdin, writes no file.
pk_uncordon_marked() {
  local m rc out failed=""
  local unsched=() marked=() now=() each=()
  local -A line=() rcof=() wasMarked=()
  pk_read_seen "$@"
  for m in "$@"; do
    if [ -z "${seen_u[$m]+x}" ]; then each+=("$m"); continue; fi
    if [ -z "${seen_m[$m]}" ]; then line[$m]="$m: not cordoned by this component"; continue; fi
    if [ "${seen_u[$m]}" = true ]; then unsched+=("$m"); fi
    marked+=("$m")
    wasMarked[$m]=1
  done
  if [ ${#unsched[@]} -gt 0 ]; then
    pk_kubectl uncordon "${unsched[@]}" >&2 </dev/null || true
    pk_read_seen "${unsched[@]}"
  fi
  if [ ${#marked[@]} -gt 0 ]; then
    for m in "${marked[@]}"; do
      if [ -n "${seen_u[$m]+x}" ] && [ "${seen_u[$m]}" != true ]; then now+=("$m"); else each+=("$m"); fi
    done
  fi
  if [ ${#now[@]} -gt 0 ]; then
    if pk_kubectl annotate --overwrite node "${now[@]}" "$PK_CORDONED_ANNOTATION-" >&2 </dev/null; then
      for m in "${now[@]}"; do line[$m]="$m: uncordoned"; done
    else
      each+=("${now[@]}")
    fi
  fi
  if [ ${#each[@]} -gt 0 ]; then
    for m in "${each[@]}"; do
      rc=0
      out=$(pk_uncordon_one "$m") || rc=$?
      rcof[$m]=$rc
      if [ "$rc" != 0 ]; then unset "line[$m]"; continue; fi
      # A marked Node whose mark a refused batched call did remove after all was still uncordoned here.
      if [ -n "${wasMarked[$m]+x}" ]; then line[$m]="$m: uncordoned"; else line[$m]=$out; fi
    done
  fi
  for m in "$@"; do
    if [ -n "${line[$m]+x}" ]; then printf '%s\n' "${line[$m]}"; fi
    if [ -n "${rcof[$m]+x}" ] && [ "${rcof[$m]}" != 0 ] && [ -z "$failed" ]; then failed="$m ${rcof[$m]}"; fi
  done
  if [ -n "$failed" ]; then
    PK_NODE=${failed% *}
    if [ "${failed##* }" = 3 ]; then pk_fail "cannot read the Node"; else pk_fail "could not uncordon the node"; fi
  fi
}

# pk_mark_for_drain NODE REASON [NODE REASON]...: before the drains, mark each NODE with this component's
# cordon mark, the annotation $PK_CORDONED_ANNOTATION=REASON (read with the jsonpath $PK_CORDON_MARK), unless an operator
# cordoned it (unschedulable without the mark: drained, and left cordoned, which is said on stderr). The
# Nodes read in one call (pk_read_seen), a Node that read missed on its own (failing, named, when it cannot
# be read: `cannot read the Node`); then one `kubectl annotate` per distinct REASON (usually one for a whole
# rollout batch); one kubectl refuses is made again Node by Node, and the first Node that fails then fails
# the step, named (`could not mark the Node ...; nothing drained`).
pk_mark_for_drain() {
  local args=() nodes=() reasons=() who=() m r i k seen unschedulable ours names
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i += 2)); do nodes+=("${args[$i]}"); done
  pk_read_seen "${nodes[@]}"
  for ((i = 0; i < ${#args[@]}; i += 2)); do
    m=${args[$i]}
    r=${args[$((i + 1))]}
    if [ -n "${seen_u[$m]+x}" ]; then
      unschedulable=${seen_u[$m]}
      ours=${seen_m[$m]}
    else
      seen=$(pk_kubectl get node "$m" -o jsonpath="{.spec.unschedulable}|$PK_CORDON_MARK" </dev/null) || { PK_NODE=$m; pk_fail "cannot read the Node"; }
      IFS='|' read -r unschedulable ours <<<"$seen" || true
    fi
    if [ "$unschedulable" = true ] && [ -z "$ours" ]; then
      printf 'pulumi-kubeadm: node %s: cordoned by someone else; drained, and left cordoned\n' "$m" >&2
      continue
    fi
    k=0
    while [ $k -lt ${#reasons[@]} ] && [ "${reasons[$k]}" != "$r" ]; do k=$((k + 1)); done
    if [ $k -eq ${#reasons[@]} ]; then reasons+=("$r"); who+=(""); fi
    who[$k]+=" $m"
  done
  for ((i = 0; i < ${#reasons[@]}; i++)); do
    read -r -a names <<<"${who[$i]}"
    if ! pk_kubectl annotate --overwrite node "${names[@]}" "$PK_CORDONED_ANNOTATION=${reasons[$i]}" >&2 </dev/null; then
      # kubectl goes on past a Node it could not annotate and exits 1: each one again on its own.
      for m in "${names[@]}"; do
        pk_kubectl annotate --overwrite node "$m" "$PK_CORDONED_ANNOTATION=${reasons[$i]}" >&2 </dev/null || { PK_NODE=$m; pk_fail "could not mark the Node as cordoned by this component; nothing drained"; }
      done
    fi
  done
}

# pk_node_version NODE TARGET: the version NODE runs, as this component records it when a node is made
# (init/join) or fully upgraded (its kubelet step): the record, else (a node made before the record
# existed) the kubelet version the cluster reports for the Node, else TARGET (no such Node); fails when
# the Node cannot be read (a read that failed is not taken for "at TARGET": the upgrade would be skipped).
pk_node_version() {
  local v=""
  if [ -f "$PK_STATE_DIR/version" ]; then v=$(cat "$PK_STATE_DIR/version"); fi
  if [ -z "$v" ] && [ -f /etc/kubernetes/kubelet.conf ]; then
    v=$(pk_get_node /etc/kubernetes/kubelet.conf "$1" 'jsonpath={.status.nodeInfo.kubeletVersion}') || case $? in
      1) v="" ;;
      *) pk_fail "this node has no version record and the API server did not give its Node's kubelet version (kubectl's error above); nothing was changed" ;;
    esac
  fi
  printf '%s' "${v:-$2}"
}

# pk_record_version VERSION: the node now runs VERSION (read by pk_node_version).
pk_record_version() {
  mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"
  printf '%s\n' "$1" >"$PK_STATE_DIR/version.tmp" && mv -f "$PK_STATE_DIR/version.tmp" "$PK_STATE_DIR/version"
}

# pk_minor VERSION: the minor number of v1.MINOR.PATCH (empty when VERSION is not one).
pk_minor() {
  local v=${1#v} major minor patch
  IFS=. read -r major minor patch <<<"$v" || true
  if [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]]; then printf '%s' "$minor"; fi
}

# pk_version_rules TARGET KUBELET FIRST: kubeadm's version rules for this node before anything changes,
# read on the node and in the cluster (never from an earlier run): fails naming the node when its
# kubelet (KUBELET, its installed version; empty: not installed) is newer than the API server (a member:
# the cluster's version now; a node still to join: TARGET, which the control plane reaches before it
# joins) or more than three minors older than TARGET; and with FIRST=yes (the first control-plane node
# of an existing cluster) when the cluster's version to TARGET is a downgrade or skips a minor.
pk_version_rules() {
  local target=$1 kubelet=$2 first=$3 t k api a
  t=$(pk_minor "$target")
  api=""
  if [ "$first" = yes ] && [ -f "$PK_ADMIN_KUBECONFIG" ]; then
    api=$(pk_kubectl get configmap -n kube-system kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' 2>/dev/null | sed -n 's/^kubernetesVersion: *//p' || true)
  elif [ -f /etc/kubernetes/kubelet.conf ]; then
    api=$(kubectl --kubeconfig /etc/kubernetes/kubelet.conf get configmap -n kube-system kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' 2>/dev/null | sed -n 's/^kubernetesVersion: *//p' || true)
  fi
  a=$(pk_minor "$api")
  if [ "$first" = yes ] && [ -n "$a" ]; then
    if [ "$(printf '%s\n%s\n' "${api#v}" "${target#v}" | sort -V | head -n 1)" != "${api#v}" ]; then
      pk_fail "the cluster runs $api: kubeadm cannot downgrade it to $target; nothing was changed"
    fi
    if [ "$t" -gt $((a + 1)) ]; then
      pk_fail "the cluster runs $api: kubeadm upgrades one minor version at a time (next: v1.$((a + 1)).x), not to $target; nothing was changed"
    fi
  fi
  k=$(pk_minor "$kubelet")
  [ -n "$k" ] || return 0
  if [ -f /etc/kubernetes/kubelet.conf ] && [ -n "$a" ] && [ "$k" -gt "$a" ]; then
    pk_fail "its kubelet $kubelet is newer than the API server ($api); the kubelet may never be newer than kube-apiserver; nothing was changed"
  fi
  if [ ! -f /etc/kubernetes/kubelet.conf ] && [ "$k" -gt "$t" ]; then
    pk_fail "its kubelet $kubelet is newer than the API server will be ($target); the kubelet may never be newer than kube-apiserver; nothing was changed"
  fi
  if [ "$k" -lt $((t - 3)) ]; then
    pk_fail "its kubelet $kubelet is more than three minor versions older than $target; upgrade it first; nothing was changed"
  fi
}

# ---- Step bodies: a step's script sets its values and calls one of these (steps/*.ts say what each does).

# pk_kubelet_ready NODE: the Ready condition's status of Node NODE, read with the kubelet's own
# kubeconfig (True, False, Unknown; nothing when it cannot be read).
pk_kubelet_ready() {
  kubectl --kubeconfig /etc/kubernetes/kubelet.conf get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true
}

# pk_kubelet_step NODE TARGET SETTLE [INSTALL]: the kubelet step (steps/kubelet.ts, kubeletScripts): the
# kubelet and kubectl packages by the bash INSTALL when the node is not at TARGET (noted in
# $PK_STATE_DIR/kubelet-upgrade, so a re-run installs nothing again; no INSTALL: nothing installed), the
# file changes on stdin applied into the step's own journal ($PK_STATE_DIR/kubelet), then one restart and
# check (SETTLE seconds) when a file changed or a kubelet was installed, this step's files restored if it
# is unhealthy, the wait for a Node that was Ready, the version recorded. Prints its one line.
pk_kubelet_step() {
  local node=$1 target=$2 settle=$3 upgraded="" own wasReady="" why="" current
  if [ -f "$PK_STATE_DIR/kubelet-upgrade" ]; then upgraded=$(cat "$PK_STATE_DIR/kubelet-upgrade"); fi
  current=$target
  if [ "$upgraded" != "$target" ]; then current=$(pk_node_version "$node" "$target"); fi
  if [ "$current" != "$target" ]; then
    if [ $# -ge 4 ]; then
      printf 'pulumi-kubeadm: node %s: kubelet install step for %s\n' "$PK_NODE" "$target" >&2
      bash -c "$4" >&2 || pk_fail "the kubelet install step failed"
    fi
    mkdir -p "$PK_STATE_DIR" && chmod 0700 "$PK_STATE_DIR"
    echo "$target" >"$PK_STATE_DIR/kubelet-upgrade.tmp" && mv -f "$PK_STATE_DIR/kubelet-upgrade.tmp" "$PK_STATE_DIR/kubelet-upgrade"
    upgraded=$target
  fi
  own="$PK_STATE_DIR"/kubelet
  PK_STATE_DIR=$own pk_apply_files
  if pk_files_pending || PK_STATE_DIR=$own pk_files_pending || [ -n "$upgraded" ]; then
    wasReady=$(pk_kubelet_ready "$node")
    if ! pk_kubelet_healthy "$settle"; then
      why=$(systemctl status kubelet 2>&1 | tail -n 5 || true)
      if PK_STATE_DIR=$own pk_files_pending; then
        PK_STATE_DIR=$own pk_restore
        pk_kubelet_healthy "$settle" || true
        printf '%s\n' "$why" >&2
        pk_fail "the kubelet was unhealthy after its files changed${upgraded:+ and its upgrade to $upgraded}; the files this step changed were restored from their backups and the kubelet restarted"
      fi
      printf '%s\n' "$why" >&2
      pk_fail "the kubelet is not healthy after the upgrade to $upgraded"
    fi
    if [ -n "$upgraded" ] && [ "$wasReady" = True ]; then
      for _ in $(seq 1 120); do [ "$(pk_kubelet_ready "$node")" = True ] && break; sleep 1; done
      [ "$(pk_kubelet_ready "$node")" = True ] || pk_fail "the Node is not Ready 120 s after the kubelet restart"
    fi
    PK_STATE_DIR=$own pk_files_settled
    pk_files_settled
    if [ -n "$upgraded" ]; then
      pk_record_version "$upgraded"
      rm -f "$PK_STATE_DIR/kubelet-upgrade"
      echo "files changed: $PK_CHANGED; kubelet upgraded to $upgraded, restarted and healthy"
    else
      echo "files changed: $PK_CHANGED; kubelet restarted and healthy"
    fi
  else
    echo "files changed: 0; kubelet not restarted"
  fi
}

# pk_kubeadm_rerun_refused ACTION: why an update of init or join (ACTION) on a node without the record of
# its kubeadm run, or with the record but no kubeadm state, is refused, and what to do instead.
pk_kubeadm_rerun_refused() {
  local what
  if [ "$1" = init ]; then
    what="a second kubeadm init would make a new, separate cluster, and the first control-plane node holds the cluster's certificate authority and first etcd member. Restore that machine (or put back its host); this component cannot move a cluster's first control-plane node to another machine"
  else
    what="a second kubeadm join would register this machine under the old Node's name. To put a new machine under this name: remove the node from nodes and pulumi up (first, for a worker whose old machine is unreachable, set gone: true and pulumi up; a control-plane node's old etcd member must be removed by hand first, etcdctl member remove on another control-plane node), then add it back: it joins as a new node, with fresh join material"
  fi
  printf 'the stack records kubeadm %s for this node (or keeps it for a node written off with gone: true), but the node has no record of that run (another machine at its host) or no kubeadm state (reset by hand). Nothing was changed: %s' "$1" "$what"
}

# pk_kubeadm_unfinished RUN: when the earlier kubeadm run RUN records ended without success, prints why
# (`failed`, or `did not finish (...)`: recorded as killed, or gone with no exit status after it changed
# the node) and returns 0; else returns 1. A run with no pid record (or an empty one) is not known to
# be over: returns 1.
pk_kubeadm_unfinished() {
  local rc="" gone="did not finish (its process is gone: killed, or the machine restarted)"
  if [ -f "$1/rc" ]; then rc=$(cat "$1/rc"); fi
  if [ "$rc" = killed ]; then echo "$gone"; return 0; fi
  if [ -n "$rc" ] && [ "$rc" != 0 ]; then echo failed; return 0; fi
  if [ ! -f "$1/rc" ] && [ -s "$1/pid" ] && ! pk_run_alive "$1" && ! pk_kubeadm_clean; then echo "$gone"; return 0; fi
  return 1
}

# pk_kubeadm_once ACTION CRISOCKET KEEP MATERIAL UPDATE: the init or join step (scripts/kubeadmRun.ts):
# `kubeadm ACTION --config` once (pk_run_once), the configuration from stdin into
# /etc/kubernetes/pulumi-kubeadm/kubeadm-ACTION.yaml (0600; removed after success unless KEEP is yes); an
# earlier run that failed, or did not finish (killed, or the machine restarted) after it changed the
# node, is reset first (kubeadm reset --cri-socket CRISOCKET) where the node was clean before it, on a
# create only (an update's create succeeded: a run record without success there is a lost record, not a
# half-made node); a new attempt with join material past its lifetime (the configuration's first line)
# fails naming the resource MATERIAL made it (empty: no such line); the version the configuration names
# recorded. With UPDATE yes, refused first on a node with no record of the run or no kubeadm state.
pk_kubeadm_once() {
  local action=$1 cri=$2 keep=$3 material=$4 update=$5 run file tmp valid made why=""
  run=$PK_STATE_DIR/run/$action
  file=/etc/kubernetes/pulumi-kubeadm/kubeadm-$action.yaml
  if [ "$update" = yes ] && { [ ! -e "$run" ] || { [ -f "$run/done" ] && pk_kubeadm_clean; }; }; then pk_fail "$(pk_kubeadm_rerun_refused "$action")"; fi
  if [ ! -f "$run/done" ]; then
    pk_run_settle "$run"
    if [ "$update" != yes ] && [ -f "$run/clean-before" ]; then why=$(pk_kubeadm_unfinished "$run") || why=""; fi
    if [ -n "$why" ]; then
      printf 'pulumi-kubeadm: node %s: the last kubeadm %s %s; kubeadm reset before trying again\n' "$PK_NODE" "$action" "$why" >&2
      kubeadm reset -f --cri-socket "$cri" >&2 || pk_fail "kubeadm reset before trying kubeadm $action again failed"
      rm -f "$run/rc" "$run/pid"
    elif [ ! -f "$run/pid" ] && pk_kubeadm_clean; then
      mkdir -p "$run" && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/run" "$run" && touch "$run/clean-before"
    fi
    mkdir -p /etc/kubernetes/pulumi-kubeadm && chmod 0700 /etc/kubernetes/pulumi-kubeadm
    tmp=$(mktemp "/etc/kubernetes/pulumi-kubeadm/.kubeadm-$action.XXXXXX")
    cat >"$tmp"
    chmod 0600 "$tmp" && sync "$tmp" && mv -f "$tmp" "$file"
    if [ -n "$material" ]; then
      valid=$(sed -n '1s/^# pulumi-kubeadm: join material valid until \([0-9]*\).*$/\1/p' "$file")
      if [ -n "$valid" ] && { [ ! -f "$run/pid" ] || [ -f "$run/rc" ]; } && [ "$(date +%s)" -ge "$valid" ]; then
        pk_fail "the join material expired at $(date -u -d "@$valid" +%Y-%m-%dT%H:%M:%SZ) (the join failed before and is retried later than the token or certificate key lives); make new material and retry: pulumi up --replace <the URN of $material> (pulumi stack --show-urns lists it)"
      fi
    fi
  fi
  pk_run_once "$action" kubeadm "$action" --config "$file"
  made=$(sed -n 's/^# pulumi-kubeadm: kubernetesVersion \(v[0-9.]*\)$/\1/p' "$file" 2>/dev/null | head -n 1 || true)
  if [ ! -f "$PK_STATE_DIR/version" ] && [ -n "$made" ]; then pk_record_version "$made"; fi
  if [ "$keep" != yes ]; then rm -f "$file"; fi
}

# pk_kubeadm_reset ACTION CRISOCKET: the delete of init or join, once its claim was the last: `kubeadm
# reset -f --cri-socket CRISOCKET` where kubeadm ran, then its run record, the version and the
# configuration files removed.
pk_kubeadm_reset() {
  if [ -e /etc/kubernetes/kubelet.conf ] || [ -e /etc/kubernetes/admin.conf ] || [ -d "$PK_STATE_DIR/run/$1" ]; then
    kubeadm reset -f --cri-socket "$2" >&2
  fi
  rm -rf "$PK_STATE_DIR/run/$1" "$PK_STATE_DIR/version" /etc/kubernetes/pulumi-kubeadm
}

# pk_join_material TTL LIFETIME CONTROLPLANE: on the first control-plane node, fresh join material
# (steps/joinToken.ts, joinMaterialLines): `kubeadm token create --ttl TTL --print-join-command` and, with
# CONTROLPLANE yes, a new certificate key (`kubeadm init phase upload-certs --upload-certs`); prints the
# lines apiServerEndpoint=, token=, caCertHash=, certificateKey= (empty for a worker) and validUntil= (now
# plus LIFETIME seconds, counted from before anything was made). kubeadm's messages go to a 0600 file and,
# on failure, to stderr with secrets masked.
pk_join_material() {
  local valid line endpoint token="" hash="" key="" i
  local -a words
  [ -f "$PK_ADMIN_KUBECONFIG" ] || pk_fail "no $PK_ADMIN_KUBECONFIG on the first control-plane node: kubeadm init has not run"
  valid=$(( $(date +%s) + $2 ))
  pk_material_err=$(mktemp)
  trap 'rm -f "$pk_material_err"' EXIT
  line=$(kubeadm token create --ttl "$1" --print-join-command 2>"$pk_material_err" | tail -n 1) || { pk_mask <"$pk_material_err" >&2; pk_fail "kubeadm token create failed"; }
  read -r -a words <<<"$line"
  endpoint=${words[2]:-}
  for ((i = 0; i < ${#words[@]}; i++)); do
    case ${words[i]} in
      --token) token=${words[i+1]:-} ;;
      --discovery-token-ca-cert-hash) hash=${words[i+1]:-} ;;
    esac
  done
  [ -n "$endpoint" ] && [ -n "$token" ] && [ -n "$hash" ] || pk_fail "could not read the join command kubeadm printed"
  if [ "$3" = yes ]; then
    key=$(kubeadm init phase upload-certs --upload-certs 2>"$pk_material_err" | tail -n 1) || { pk_mask <"$pk_material_err" >&2; pk_fail "kubeadm init phase upload-certs failed"; }
    [[ $key =~ ^[0-9a-f]{64}$ ]] || pk_fail "could not read the certificate key kubeadm printed"
  fi
  printf 'apiServerEndpoint=%s\ntoken=%s\ncaCertHash=%s\ncertificateKey=%s\nvalidUntil=%s\n' "$endpoint" "$token" "$hash" "$key" "$valid"
}

# pk_exit_if_still_wanted NODE: for a destructive delete on the first control-plane node, after
# `pk_release` let it act (scripts/members.ts): when NODE is still in the list of the cluster's nodes
# ($PK_STATE_DIR/members, written by the members record), the reason is said and the script exits 0,
# nothing done and the claim kept; otherwise (removed, or no list) it returns.
pk_exit_if_still_wanted() {
  if [ -f "$PK_STATE_DIR/members" ] && grep -qxF -- "$1" "$PK_STATE_DIR/members"; then
    printf 'pulumi-kubeadm: node %s: still in the nodes of the last up: a replacement, not a removal; nothing done\n' "$1" >&2
    exit 0
  fi
}

# pk_read_metadata NODE...: what pk_node_metadata reads of each named Node ($PK_NODE_METADATA_READ), for
# them all in ONE kubectl call (pk_nodes_lines), into the global associative
# array seen_meta[<node>], which pk_node_metadata takes (once) instead of reading that Node itself: a join
# wave's node-metadata reads its members in one call, not one call each. A Node the call could not read
# gets no entry (pk_node_metadata then reads it on its own, and fails naming it). Never fails, prints
# nothing; an earlier read's entries for the named Nodes are dropped first.
pk_read_metadata() {
  local out n rest
  declare -gA seen_meta
  for n in "$@"; do unset "seen_meta[$n]"; done
  out=$(pk_nodes_lines "$PK_NODE_METADATA_READ" "$@" 2>/dev/null) || true
  while IFS='|' read -r n rest; do
    if [ -n "$n" ]; then seen_meta[$n]=$rest; fi
  done <<<"$out"
}

# pk_node_metadata NODE NODELOCAL MANAGED [KEY=VALUE...]: one Node's edits on the first control-plane node
# (steps/nodeMetadata.ts, nodeMetadataLines), with one read (pk_read_metadata's, when it read this Node)
# and at most three writes: uncordoned when this
# component's mark is on it (read again after: one still cordoned fails, keeping the mark); one `kubectl
# label` that removes the managed labels (MANAGED: the wanted keys, sorted, comma-separated) no longer
# wanted and sets KEY=VALUE...; one `kubectl annotate` for the managed-labels record, the mark (removed)
# and the cri-socket annotation: removed with NODELOCAL yes, else set to the endpoint read as ONE line
# from stdin. The annotate runs only when an annotation differs; the label runs whenever labels are
# wanted or dropped (the read does not fetch their values: the same values change nothing, and kubectl
# says "not labeled"). Calls for several Nodes may follow each other in one
# script, each reading its own endpoint line, in order (the join waves' node-metadata).
pk_node_metadata() {
  local node=$1 nodelocal=$2 managed=$3 endpoint="" seen unschedulable previous cri cordoned key
  local -a label=() annotate=() keys=()
  # Its messages name the Node it edits, also in a join wave's step (which runs for the first control-plane node).
  local PK_NODE=$node
  shift 3
  if [ "$nodelocal" != yes ]; then
    IFS= read -r endpoint || true
    [[ $endpoint =~ ^unix:///[A-Za-z0-9._/@+-]+$ ]] || pk_fail "no usable CRI endpoint on stdin for the annotation"
  fi
  declare -gA seen_meta
  if [ -n "${seen_meta[$node]+x}" ]; then
    # Read for it by pk_read_metadata, once: a later call for this Node reads it again.
    seen=${seen_meta[$node]}
    unset "seen_meta[$node]"
  else
    seen=$(pk_nodes_lines "$PK_NODE_METADATA_READ" "$node") || pk_fail "the Node object is not registered"
    seen=${seen#*|}
  fi
  IFS='|' read -r unschedulable previous cri cordoned <<<"$seen" || true
  if [ -n "$cordoned" ] && [ "$unschedulable" = true ]; then pk_uncordon_checked "$node"; fi
  IFS=, read -r -a keys <<<"$previous" || true
  for key in ${keys[@]+"${keys[@]}"}; do
    if [ -n "$key" ] && [[ ,$managed, != *",$key,"* ]]; then label+=("$key-"); fi
  done
  label+=("$@")
  if [ ${#label[@]} -gt 0 ]; then pk_kubectl label --overwrite node "$node" "${label[@]}" >&2; fi
  if [ -n "$cordoned" ]; then annotate+=("$PK_CORDONED_ANNOTATION-"); fi
  if [ "$previous" != "$managed" ]; then annotate+=("$PK_LABELS_ANNOTATION=$managed"); fi
  if [ "$nodelocal" = yes ]; then
    if [ -n "$cri" ]; then annotate+=("$PK_CRI_SOCKET_ANNOTATION-"); fi
  elif [ "$cri" != "$endpoint" ]; then
    annotate+=("$PK_CRI_SOCKET_ANNOTATION=$endpoint")
  fi
  if [ ${#annotate[@]} -gt 0 ]; then pk_kubectl annotate --overwrite node "$node" "${annotate[@]}" >&2; fi
}

# pk_upgrade_step NODE TARGET APPLY [INSTALL]: the upgrade step (steps/upgrade.ts, upgradeScripts): prints
# report=<a new id> and nodeVersion=<the version NODE runs>; when that is not TARGET: the step checked (one
# minor up, or a patch), the pre-upgrade file changes on stdin applied (pk_apply_files), the kubeadm
# package by the bash INSTALL (none: nothing installed), then once `kubeadm upgrade apply TARGET --yes`
# (APPLY yes) or `kubeadm upgrade node`. Last, always, the kubelet files as they are now (pk_snapshot).
pk_upgrade_step() {
  local node=$1 target=$2 apply=$3 current cmaj cmin cpatch tmaj tmin tpatch what
  current=$(pk_node_version "$node" "$target")
  printf 'report=%s\n' "$(cat /proc/sys/kernel/random/uuid)"
  printf 'nodeVersion=%s\n' "$current"
  if [ "$current" != "$target" ]; then
    IFS=. read -r cmaj cmin cpatch <<<"${current#v}"
    IFS=. read -r tmaj tmin tpatch <<<"${target#v}"
    if [ "$tmaj" != "$cmaj" ] || [ "$tmin" -lt "$cmin" ] || [ "$tmin" -gt $((cmin + 1)) ] || { [ "$tmin" = "$cmin" ] && [ "$tpatch" -lt "$cpatch" ]; }; then
      pk_fail "cannot go from $current to $target: kubeadm upgrades one minor version at a time and never downgrades"
    fi
    pk_apply_files
    if [ $# -ge 4 ]; then
      printf 'pulumi-kubeadm: node %s: kubeadm install step for %s\n' "$PK_NODE" "$target" >&2
      bash -c "$4" >&2 || pk_fail "the kubeadm install step failed"
    fi
    if [ "$apply" = yes ]; then
      what="kubeadm upgrade apply"
      pk_run_once "upgrade-$target" kubeadm upgrade apply "$target" --yes
    else
      what="kubeadm upgrade node"
      pk_run_once "upgrade-$target" kubeadm upgrade node
    fi
    printf 'pulumi-kubeadm: node %s: %s to %s done; the kubelet follows\n' "$PK_NODE" "$what" "$target" >&2
  fi
  pk_snapshot "${PK_KUBELET_FILES[@]}"
}

# pk_drain_step TIMEOUT DRAINFLAGS WINDOW AHEAD MEMBER...: a drain step (steps/drain.ts, drainScripts) on
# the first control-plane node. Reads one verdict line per MEMBER on stdin (`drain|keep <report>
# <reason>`); drains a member unless its verdict is keep, or it was drained for that report already
# ($PK_STATE_DIR/drained/<node>) and carries no cordon mark since. With WINDOW (maxUnavailableWorkers; empty:
# none), under a lock, first waits while a node of AHEAD (space-separated) carries the mark, at most
# TIMEOUT seconds. Marks the members (pk_mark_for_drain), then drains them side by side (`kubectl drain
# MEMBER DRAINFLAGS`), reads them again, records each drained report, and fails naming the first member
# whose drain failed. Prints `<node>: drained: <reason>` or `<node>: no drain: <reason>` per member.
pk_drain_step() {
  local timeout=$1 flags=$2 size=$3 ahead=$4 m verdict report reason record ours waited busy nodes also
  shift 4
  local -a todo=() marks=() failed=() drainflags=()
  local -A reportOf=() reasonOf=()
  read -r -a drainflags <<<"$flags"
  for m in "$@"; do
    IFS=' ' read -r verdict report reason || true
    if [ "$verdict" != drain ]; then echo "$m: no drain: $reason"; continue; fi
    record="$PK_STATE_DIR/drained/$m"
    if [ "$report" != - ] && [ -f "$record" ] && [ "$(cat "$record")" = "$report" ]; then
      ours=$(pk_kubectl get node "$m" -o jsonpath="$PK_CORDON_MARK") || { PK_NODE=$m; pk_fail "cannot read the Node"; }
      if [ -z "$ours" ]; then echo "$m: no drain: drained for this upgrade already, uncordoned since ($reason)"; continue; fi
    fi
    todo+=("$m"); reportOf[$m]=$report; reasonOf[$m]=$reason
  done
  [ ${#todo[@]} -gt 0 ] || exit 0
  mkdir -p "$PK_STATE_DIR/drained" && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/drained"
  if [ -n "$size" ]; then
    exec 9>"$PK_STATE_DIR/drain.lock"
    flock 9
    waited=0
    while :; do
      nodes=$(pk_nodes_lines "$PK_CORDON_MARK") || pk_fail "cannot list the Nodes"
      busy=$(awk -F'|' -v ahead=" $ahead " '$2 != "" && index(ahead, " " $1 " ") > 0 { printf "%s ", $1 }' <<<"$nodes")
      [ -n "$busy" ] || break
      [ "$waited" -lt "$timeout" ] || pk_fail "maxUnavailableWorkers ($size): ${busy% } (ahead in the rollout) still cordoned by this component; nothing was changed on ${todo[*]}"
      flock -u 9; sleep 2; waited=$((waited + 2)); flock 9
    done
  fi
  for m in "${todo[@]}"; do marks+=("$m" "${reasonOf[$m]}"); done
  pk_mark_for_drain "${marks[@]}"
  if [ -n "$size" ]; then flock -u 9; fi
  pk_drain_out=$(mktemp -d); trap 'rm -rf "$pk_drain_out"' EXIT
  for m in "${todo[@]}"; do
    # `|| rc=$?`: under set -e a failed drain would end the background job before its status is written.
    { rc=0; pk_kubectl drain "$m" "${drainflags[@]}" >"$pk_drain_out/$m.log" 2>&1 || rc=$?; echo "$rc" >"$pk_drain_out/$m.rc"; } &
  done
  wait
  # kubectl drain goes on when its cordon patch fails (it prints the error): every Node read again.
  pk_read_seen "${todo[@]}"
  for m in "${todo[@]}"; do
    if [ "$(cat "$pk_drain_out/$m.rc")" = 0 ] && [ "${seen_u[$m]-}" != true ]; then
      echo "error: still schedulable after kubectl drain (its cordon failed)" >>"$pk_drain_out/$m.log"
      echo 1 >"$pk_drain_out/$m.rc"
    fi
  done
  for m in "${todo[@]}"; do
    cat "$pk_drain_out/$m.log" >&2
    if [ "$(cat "$pk_drain_out/$m.rc")" != 0 ]; then failed+=("$m"); continue; fi
    record="$PK_STATE_DIR/drained/$m"
    if [ "${reportOf[$m]}" != - ]; then printf '%s\n' "${reportOf[$m]}" >"$record.tmp" && mv -f "$record.tmp" "$record"; fi
    echo "$m: drained: ${reasonOf[$m]}"
  done
  if [ ${#failed[@]} -gt 0 ]; then
    also=""; [ ${#failed[@]} -eq 1 ] || also="; the drains of ${failed[*]:1} failed too"
    PK_NODE=${failed[0]}
    pk_fail "drain failed, the node stays cordoned and the rollout stops here: $(tail -n 1 "$pk_drain_out/${failed[0]}.log")$also"
  fi
}
