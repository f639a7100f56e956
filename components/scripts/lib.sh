# Bash functions shared by pulumi-kubeadm's node scripts. script.ts includes in each script only the
# functions it calls (a block runs from `name() {` to the next line that is just `}`). Every script runs
# with `set -euo pipefail` and sets PK_NODE (the node's name, for messages) and PK_STATE_DIR first.
#
# State on a node, under $PK_STATE_DIR (/var/lib/pulumi-kubeadm, mode 0700):
#   run/<action>/{pid,rc,log,done}   a detached kubeadm run (pk_run_once)
#   backup/<UTC timestamp>/<path>    each file as it was before it was replaced or removed

# pk_fail MESSAGE...: print "pulumi-kubeadm: node <name>: MESSAGE" on stderr and exit 1.
pk_fail() {
  printf 'pulumi-kubeadm: node %s: %s\n' "$PK_NODE" "$*" >&2
  exit 1
}

# pk_mask: filter hiding bootstrap tokens and 64-hex-digit values (certificate keys) in log text.
pk_mask() {
  sed -E 's/[a-z0-9]{6}\.[a-z0-9]{16}/<bootstrap-token>/g; s/[0-9a-f]{64}/<redacted>/g'
}

# pk_run_once NAME COMMAND...: run COMMAND at most once to success on this node. It runs detached (own
# session, output to a log), so a lost SSH connection does not kill kubeadm half-way. A re-run waits for
# a run still going, accepts one that finished after the connection was lost, and starts again only
# after a failure. Success is marked by run/NAME/done.
pk_run_once() {
  local name=$1; shift
  local dir=$PK_STATE_DIR/run/$name pid="" rc
  if [ -f "$dir/done" ]; then
    printf 'pulumi-kubeadm: node %s: %s already done, nothing to do\n' "$PK_NODE" "$name" >&2
    return 0
  fi
  mkdir -p "$dir" && chmod 0700 "$PK_STATE_DIR" "$PK_STATE_DIR/run" "$dir"
  if [ -f "$dir/pid" ]; then pid=$(cat "$dir/pid"); fi
  if [ -f "$dir/rc" ] && [ "$(cat "$dir/rc")" = 0 ]; then
    printf 'pulumi-kubeadm: node %s: %s finished after an earlier connection was lost\n' "$PK_NODE" "$name" >&2
  elif [ -n "$pid" ] && [ ! -f "$dir/rc" ] && kill -0 "$pid" 2>/dev/null; then
    printf 'pulumi-kubeadm: node %s: %s still running from an earlier connection; waiting\n' "$PK_NODE" "$name" >&2
  else
    rm -f "$dir/rc" "$dir/pid"
    setsid bash -c '"$@" >"$0/log" 2>&1; echo $? >"$0/rc.tmp"; mv -f "$0/rc.tmp" "$0/rc"' "$dir" "$@" </dev/null >/dev/null 2>&1 &
    pid=$!
    echo "$pid" >"$dir/pid"
  fi
  while [ ! -f "$dir/rc" ]; do
    if ! kill -0 "$pid" 2>/dev/null && [ ! -f "$dir/rc" ]; then
      rm -f "$dir/pid"
      pk_fail "$name was killed before it finished; log: $dir/log"
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
#   pk-write <path> <expected sha256|absent> <octal mode> <base64 content>
#   pk-remove <path> <expected sha256>
# First every file is compared with what the plan read (compare-and-swap): a file already as wanted is
# skipped (a re-run repeats nothing); a file neither as read nor as wanted makes the step refuse before
# anything changes. Then each change: timestamped backup, temp file in the same directory, fsync,
# rename, fsync of the directory. Sets PK_CHANGED (count) and PK_UNDO (lines "<path> <backup|absent>").
pk_apply_files() {
  local op path expect mode data cur want i n ts dir tmp backup
  local -a ops=() paths=() expects=() modes=() datas=() todo=()
  while read -r op path expect mode data || [ -n "$op" ]; do
    [ -n "$op" ] || continue
    ops+=("$op"); paths+=("$path"); expects+=("$expect"); modes+=("$mode"); datas+=("$data")
  done
  n=${#ops[@]}
  PK_CHANGED=0
  PK_UNDO=""
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
    if [ "$cur" != "${expects[i]}" ]; then
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
    PK_UNDO+="$path $backup"$'\n'
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

# pk_restore: undo what pk_apply_files changed (PK_UNDO), each file put back atomically.
pk_restore() {
  local path backup tmp
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
  done <<<"$PK_UNDO"
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
