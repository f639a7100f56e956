#!/usr/bin/env bash
# Builds real kubeadm binaries from the k8s.io/kubernetes Go module, one per version, and caches them.
#
#   tools/build-kubeadm.sh [--latest] [--list] [--component kube-apiserver] [VERSION|MINOR ...]
#
# --component kube-apiserver builds k8s.io/kubernetes/cmd/kube-apiserver instead (the same wrapper
# module; cache .../kube-apiserver/vX.Y.Z/kube-apiserver). The fidelity test runs one for the upgrade
# and upload-config cases.
#
# VERSION is vX.Y.Z; MINOR is 1.Y (its pinned patch below, or with --latest the newest patch the Go
# module proxy serves). No argument: every pinned version. --list prints the pinned versions and exits.
#
# k8s.io/kubernetes cannot be built as a plain dependency: its go.mod requires its staging modules
# (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and replaces them with ./staging/src/..., and replace
# directives of a dependency are ignored. So each build runs in a small generated wrapper module that
# requires k8s.io/kubernetes vX.Y.Z and replaces every staging module that go.mod names with its
# published version v0.Y.Z of the same release, then `go build k8s.io/kubernetes/cmd/kubeadm` with the
# version stamped in as the Kubernetes release build does (-ldflags -X k8s.io/component-base/version...).
#
# Cache: ${PULUMI_KUBEADM_CACHE:-$HOME/.cache/pulumi-kubeadm}/kubeadm/vX.Y.Z/{kubeadm,build.log,wrapper/}.
# A cached binary is reused (a second run takes seconds and needs no network). A failed build leaves
# build.log with the exact command and its error, and the script goes on with the next version.
# Builds run one at a time under `nice`, GOMAXPROCS and -p limited to the machine's cores.
# Network: only the Go module proxy (the go command's GOPROXY and its checksum database proxy).
#
# Output: one line per version on stdout, `vX.Y.Z <absolute path of the binary>`; progress, times and
# errors on stderr. Exit 1 if any version failed (the others are still built).
set -euo pipefail

# Latest patch per minor that the Go module proxy served when this list was last updated.
PINNED=(v1.31.14 v1.32.13 v1.33.13 v1.34.4 v1.35.4 v1.36.3 v1.37.2)

component=kubeadm
latest=0
wanted=()
want_component=0
for a in "$@"; do
  if [ "$want_component" = 1 ]; then component="$a"; want_component=0; continue; fi
  case "$a" in
    --component) want_component=1 ;;
    --component=*) component="${a#--component=}" ;;
    --latest) latest=1 ;;
    --list) printf '%s\n' "${PINNED[@]}"; exit 0 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    v[0-9]*.[0-9]*.[0-9]*|[0-9]*.[0-9]*) wanted+=("$a") ;;
    *) echo "build-kubeadm: unknown argument: $a" >&2; exit 2 ;;
  esac
done
case "$component" in
  kubeadm|kube-apiserver) ;;
  *) echo "build-kubeadm: unknown component: $component (kubeadm, kube-apiserver)" >&2; exit 2 ;;
esac
cache_root="${PULUMI_KUBEADM_CACHE:-$HOME/.cache/pulumi-kubeadm}/$component"
if [ "${#wanted[@]}" -eq 0 ]; then
  if [ "$latest" = 1 ]; then
    wanted=()
    for v in "${PINNED[@]}"; do wanted+=("$(echo "$v" | sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/')"); done
  else
    wanted=("${PINNED[@]}")
  fi
fi

command -v go >/dev/null || { echo "build-kubeadm: the go command is not on PATH" >&2; exit 1; }

# served_versions: every k8s.io/kubernetes version the proxy lists (via the go command).
served_versions() {
  local d
  d="$(mktemp -d)"
  (cd "$d" && GOFLAGS=-mod=mod go list -m -versions k8s.io/kubernetes 2>/dev/null | tr ' ' '\n' | tail -n +2)
  rm -rf "$d"
}

# resolve MINOR|VERSION: the exact version to build.
resolve() {
  local a="$1"
  if [[ "$a" == v*.*.* ]]; then echo "$a"; return; fi
  if [ "$latest" = 0 ]; then
    for v in "${PINNED[@]}"; do
      if [[ "$v" == "v$a."* ]]; then echo "$v"; return; fi
    done
  fi
  local v
  v="$(served_versions | grep -E "^v${a//./\\.}\.[0-9]+$" | sort -V | tail -n 1 || true)"
  if [ -z "$v" ]; then echo "build-kubeadm: no v$a.x of k8s.io/kubernetes is served by the Go module proxy" >&2; return 1; fi
  echo "$v"
}

# substitute WRAPPER MODULE MINOR PATCH LOG: points MODULE's replace at the newest v0.MINOR.P (P < PATCH)
# that the proxy serves; says so on stderr and in LOG. Fails when none is served.
substitute() {
  local wrapper="$1" module="$2" minor="$3" patch="$4" log="$5" p
  for ((p = patch - 1; p >= 0; p--)); do
    if (cd "$wrapper" && GOFLAGS=-mod=mod go mod download "$module@v0.$minor.$p") >/dev/null 2>&1; then
      sed -i -E "s#^(\t$module => $module) v0\.$minor\.$patch\$#\1 v0.$minor.$p#" "$wrapper/go.mod"
      echo "SUBSTITUTED: $module v0.$minor.$patch is refused by the Go module proxy (403); using v0.$minor.$p" >>"$log"
      echo "build-kubeadm: $module v0.$minor.$patch is refused by the Go module proxy; using v0.$minor.$p instead" >&2
      return 0
    fi
  done
  echo "no served v0.$minor.x (x < $patch) of $module" >>"$log"
  return 1
}

# binary_version BINARY: the version the built binary reports (vX.Y.Z).
binary_version() {
  if [ "$component" = kubeadm ]; then "$1" version -o short; else "$1" --version | sed -E 's/^Kubernetes //'; fi
}

# build VERSION: builds into the cache unless the binary is there. Returns non-zero on failure.
build() {
  local v="$1" dir="$cache_root/$1"
  local bin="$dir/$component" log="$dir/build.log" wrapper="$dir/wrapper"
  if [ -x "$bin" ] && binary_version "$bin" >/dev/null 2>&1; then
    echo "build-kubeadm: $v cached ($bin)" >&2
    echo "$v $bin"
    return 0
  fi
  local minor patch
  minor="$(echo "$v" | sed -E 's/^v1\.([0-9]+)\.([0-9]+)$/\1/')"
  patch="$(echo "$v" | sed -E 's/^v1\.([0-9]+)\.([0-9]+)$/\2/')"
  if ! [[ "$minor" =~ ^[0-9]+$ && "$patch" =~ ^[0-9]+$ ]]; then
    echo "build-kubeadm: $v is not a v1.Y.Z version" >&2
    return 1
  fi
  local staging_version="v0.$minor.$patch"
  mkdir -p "$dir"
  rm -rf "$wrapper"
  mkdir -p "$wrapper"
  : >"$log"
  local start=$SECONDS

  # The kubernetes go.mod: the staging modules it replaces, and the Go version it needs.
  local info
  if ! info="$(cd "$wrapper" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$v" 2>>"$log")"; then
    {
      echo "FAILED: (cd $wrapper && GOFLAGS=-mod=mod go mod download -json k8s.io/kubernetes@$v)"
      echo "$info"
    } >>"$log"
    echo "build-kubeadm: $v FAILED to download, see $log:" >&2
    tail -n 5 "$log" >&2
    return 1
  fi
  local gomod
  gomod="$(echo "$info" | sed -n -E 's/^[[:space:]]*"GoMod": "(.*)",?$/\1/p')"
  local go_directive staging
  go_directive="$(sed -n -E 's/^go ([0-9.]+)$/\1/p' "$gomod")"
  staging="$(sed -n -E 's#^[[:space:]]*(k8s\.io/[A-Za-z0-9._-]+) => \./staging/src/k8s\.io/[A-Za-z0-9._-]+$#\1#p' "$gomod")"
  if [ -z "$staging" ]; then
    echo "FAILED: no '=> ./staging/...' replace found in $gomod" >>"$log"
    echo "build-kubeadm: $v FAILED: no staging replaces in its go.mod" >&2
    return 1
  fi

  {
    echo "// Generated by tools/build-kubeadm.sh: builds k8s.io/kubernetes/cmd/$component $v."
    echo "module pulumi-kubeadm.local/build-kubeadm"
    echo
    echo "go $go_directive"
    echo
    echo "require k8s.io/kubernetes $v"
    echo
    echo "replace ("
    for m in $staging; do echo "	$m => $m $staging_version"; done
    echo ")"
  } >"$wrapper/go.mod"

  local pkg=k8s.io/component-base/version
  local ldflags="-s -w -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitTreeState=clean"
  local cores
  cores="$(nproc)"
  local cmd=(nice -n 10 env CGO_ENABLED=0 GOFLAGS=-mod=mod GOMAXPROCS="$cores" go build -p "$cores" -trimpath -ldflags "$ldflags" -o "$bin.tmp" "k8s.io/kubernetes/cmd/$component")
  {
    echo "# in $wrapper:"
    printf '%q ' "${cmd[@]}"
    echo
  } >>"$log"
  echo "build-kubeadm: building $v (Go module k8s.io/kubernetes $v, staging modules $staging_version)..." >&2
  local attempt refused
  for attempt in 1 2 3 4 5 6; do
    local ok=0
    (cd "$wrapper" && "${cmd[@]}") >"$log.attempt" 2>&1 || ok=$?
    cat "$log.attempt" >>"$log"
    if [ "$ok" = 0 ]; then rm -f "$log.attempt"; break; fi
    # The proxy here refuses some versions (403 "This module version is not available"). A refused
    # staging module is replaced with the nearest older patch of the same minor that is served.
    refused="$(sed -n -E "s#.*(k8s\.io/[A-Za-z0-9._-]+)@$staging_version: reading .*403 Forbidden.*#\1#p" "$log" | sort -u | head -n 1)"
    if [ -z "$refused" ] || [ "$attempt" = 6 ] || ! substitute "$wrapper" "$refused" "$minor" "$patch" "$log"; then
      rm -f "$bin.tmp"
      echo "FAILED after $((SECONDS - start)) s" >>"$log"
      echo "build-kubeadm: $v FAILED after $((SECONDS - start)) s; command and error in $log:" >&2
      tail -n 15 "$log" >&2
      return 1
    fi
    {
      echo "# again, in $wrapper:"
      printf '%q ' "${cmd[@]}"
      echo
    } >>"$log"
  done
  local got
  got="$(binary_version "$bin.tmp" 2>>"$log" || true)"
  if [ "$got" != "$v" ]; then
    echo "FAILED: the built binary reports version '$got', not $v" >>"$log"
    echo "build-kubeadm: $v FAILED: the built binary reports version '$got'" >&2
    rm -f "$bin.tmp"
    return 1
  fi
  mv -f "$bin.tmp" "$bin"
  echo "built $v in $((SECONDS - start)) s" >>"$log"
  echo "build-kubeadm: built $v in $((SECONDS - start)) s ($bin)" >&2
  echo "$v $bin"
}

total_start=$SECONDS
failed=()
for a in "${wanted[@]}"; do
  if ! v="$(resolve "$a")"; then failed+=("$a"); continue; fi
  if ! build "$v"; then failed+=("$v"); fi
done
echo "build-kubeadm: done in $((SECONDS - total_start)) s${failed:+; FAILED: ${failed[*]}}" >&2
[ "${#failed[@]}" -eq 0 ]
