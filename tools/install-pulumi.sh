#!/usr/bin/env bash
# Builds the real Pulumi CLI (with its engine) from its Go module, at the version package.json pins for
# @pulumi/pulumi, and tries the Node.js language host and the provider plugins the same way.
#
#   bash tools/install-pulumi.sh          # build what is missing, print what it built and how long it took
#   bash tools/install-pulumi.sh --path   # print the folder holding the `pulumi` binary, build nothing
#
# Cache: ${PULUMI_KUBEADM_CACHE:-$HOME/.cache/pulumi-kubeadm}/pulumi/v<version>/bin/. A second run with
# the binaries in place takes seconds. Nothing built or downloaded here belongs in the repository.
#
# Upstream go.mod files carry `replace` directives, which `go install pkg@version` refuses, so each
# build happens in a small generated wrapper module that requires the upstream module and repeats
# the replaces that point at published modules (a replace that points into the upstream repository,
# such as `../sdk`, becomes a require of that module at the same release).
#
# Plugins that the Go module proxy does not serve are reported with the exact command and error, and
# the script goes on: the lab then uses its own labelled stand-in for the command plugin, and refuses to
# run a stack that registers a kubernetes Provider (see README, "What is real").
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${PULUMI_KUBEADM_CACHE:-$HOME/.cache/pulumi-kubeadm}
# The versions npm installs (package-lock.json), which the program's SDKs ask the engine for.
pin() { node -p "require('$repo/package-lock.json').packages['node_modules/$1'].version"; }
pulumi_version=$(pin @pulumi/pulumi)
command_version=$(pin @pulumi/command)
kubernetes_version=$(pin @pulumi/kubernetes)
root="$cache/pulumi/v$pulumi_version"
bin="$root/bin"

if [[ "${1:-}" == "--path" ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "install-pulumi: the go command is needed (Go 1.25.11 or newer)" >&2; exit 1; }
# The upstream modules say `go 1.25.11`.
node -e 'const v = process.argv[1].replace(/^go/, "").split(".").map(Number); const ok = v[0] > 1 || (v[0] === 1 && (v[1] > 25 || (v[1] === 25 && (v[2] ?? 0) >= 11))); process.exit(ok ? 0 : 1)' "$(go env GOVERSION)" ||
  { echo "install-pulumi: Go 1.25.11 or newer is needed, found $(go env GOVERSION)" >&2; exit 1; }
mkdir -p "$bin" "$root/logs"

# Commits of releases whose module has no version tag of its own (a module in a subfolder of a
# repository tagged only at its root): the pseudo-version the Go module proxy would serve for them.
declare -A pseudo=(
  ["github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3@3.248.0"]="v3.0.0-20260624180030-dc7edd58bc13"
  ["github.com/pulumi/pulumi-command/provider@1.2.1"]="v0.0.0-20260303235922-7f3eb6f3b77c"
)

# Releases the Go module proxy serves no version of, built from the newest commit it does serve: "<the
# commit's pseudo-version> <the release it is>". The binary says it is that release; the lab installs it
# under the version the SDK asks the engine for, and README says so. pulumi-kubernetes: its provider
# module at 4.34.2 is refused; f47bc2d (2026-01-15), the commit of release v4.25.0, is served.
declare -A substitute=(
  ["github.com/pulumi/pulumi-kubernetes/provider/v4@4.34.2"]="v4.0.0-20260115033456-f47bc2d6f199 v4.25.0"
)

# release_of MODULE VERSION: the release a build of MODULE for VERSION is (a substitute's own release).
release_of() {
  local sub=${substitute["$1@${2#v}"]:-}
  if [[ -n "$sub" ]]; then echo "${sub#* }"; else echo "v${2#v}"; fi
}

# Commands whose upstream main embeds a file generated in the repository and absent from the Go module:
# the wrapper module gets this main instead. pulumi-resource-kubernetes embeds its Pulumi schema (which
# `pulumi package get-schema` and `pulumi import` read, and a Read of a resource with no recorded inputs,
# such as `.get()`, which then reads no input properties) and its Terraform mapping; the provider is the
# same code, served with empty ones.
declare -A own_main=(
  ["github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes"]='package main

import (
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

func main() { provider.Serve("kubernetes", version.Version, []byte("{}"), []byte("{}")) }
'
)

# build NAME MODULE VERSION PACKAGE OUTPUT [LDFLAGS]: builds PACKAGE of MODULE@VERSION into OUTPUT.
# Returns 1 (after printing the exact command and error) when the module cannot be had or built.
build() {
  local name=$1 module=$2 version=$3 package=$4 out=$5 ldflags=${6:-}
  local want="v${version#v}"
  local key="$module@${version#v}"
  [[ -n "${pseudo[$key]:-}" ]] && want=${pseudo[$key]}
  # A substitute commit keeps the sibling modules its own go.mod requires (siblings=""), where a
  # release takes them at the release's tag. `$out.source` records the module version built: a binary
  # is rebuilt when a table above names another one (one built before these records is kept).
  local siblings="v${version#v}" note=""
  if [[ -n "${substitute[$key]:-}" ]]; then
    want=${substitute[$key]%% *} siblings=""
    note=" (the Go module proxy serves no $module at this release: commit $want, release $(release_of "$module" "$version"), installed as v${version#v})"
  fi
  if [[ -x "$out" ]] && { [[ ! -f "$out.source" ]] || [[ "$(cat "$out.source")" == "$module@$want" ]]; }; then
    echo "install-pulumi: $name v${version#v} cached: $out$note"
    return 0
  fi
  [[ -n "$note" ]] && echo "install-pulumi: $name v${version#v}: building$note"
  local started=$SECONDS work="$root/build/$name" log="$root/logs/$name.log" gomod
  rm -rf "$work"
  mkdir -p "$work"
  if ! gomod=$(cd "$work" && go mod download -json "$module@$want" 2>"$log" | node -e '
      let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
        const j = JSON.parse(s); if (j.Error) { console.error(j.Error); process.exit(1); } console.log(j.GoMod); });' 2>>"$log"); then
    echo "install-pulumi: $name v${version#v} NOT BUILT: \`go mod download -json $module@$want\` failed:" >&2
    sed 's/^/  /' "$log" >&2
    return 1
  fi
  # The wrapper module: require the module, repeat its replaces.
  {
    echo "module pulumikubeadm.local/build/$name"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/')"
    echo
    echo "require $module $want"
    node -e '
      const fs = require("fs");
      const text = fs.readFileSync(process.argv[1], "utf8");
      const lines = [];
      const block = /^replace\s*\(([\s\S]*?)^\)/gm;
      let m;
      while ((m = block.exec(text))) lines.push(...m[1].split("\n"));
      for (const l of text.split("\n")) if (/^replace\s+[^(\s]/.test(l)) lines.push(l.replace(/^replace\s+/, ""));
      for (const raw of lines) {
        const l = raw.replace(/\/\/.*$/, "").trim();
        if (!l) continue;
        const [from, to] = l.split("=>").map((s) => s.trim().split(/\s+/));
        // A sibling module of the same repository (../sdk, ../../../../pkg): its release tag.
        if (to[0].startsWith(".")) { if (process.argv[2]) console.log(`require ${from[0]} ${process.argv[2]}`); }
        else console.log(`replace ${from.join(" ")} => ${to.join(" ")}`);
      }' "$gomod" "$siblings"
  } >"$work/go.mod"
  local target=$package
  if [[ -n "${own_main[$package]:-}" ]]; then
    printf '%s' "${own_main[$package]}" >"$work/main.go"
    target=.
  else
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" >"$work/tools.go"
  fi
  local cmd="go build -trimpath -ldflags '-s -w $ldflags' -o $out $target"
  mkdir -p "$(dirname "$out")"
  if ! (cd "$work" && go mod tidy >>"$log" 2>&1 && go build -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp" "$target" >>"$log" 2>&1); then
    echo "install-pulumi: $name v${version#v} NOT BUILT: \`$cmd\` (in $work) failed:" >&2
    tail -20 "$log" | sed 's/^/  /' >&2
    return 1
  fi
  mv "$out.tmp" "$out"
  echo "$module@$want" >"$out.source"
  echo "install-pulumi: built $name v${version#v} in $((SECONDS - started)) s: $out"
}

failed=0
build pulumi github.com/pulumi/pulumi/pkg/v3 "$pulumi_version" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$bin/pulumi" \
  "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$pulumi_version" || failed=1
build pulumi-language-nodejs github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 "$pulumi_version" \
  github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3 "$bin/pulumi-language-nodejs" \
  "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$pulumi_version" || true
build pulumi-resource-command github.com/pulumi/pulumi-command/provider "$command_version" \
  github.com/pulumi/pulumi-command/provider/cmd/pulumi-resource-command "$root/plugins/command-v$command_version/pulumi-resource-command" \
  "-X github.com/pulumi/pulumi-command/provider/pkg/version.Version=v$command_version" || true
build pulumi-resource-kubernetes github.com/pulumi/pulumi-kubernetes/provider/v4 "$kubernetes_version" \
  github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes "$root/plugins/kubernetes-v$kubernetes_version/pulumi-resource-kubernetes" \
  "-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$(release_of github.com/pulumi/pulumi-kubernetes/provider/v4 "$kubernetes_version")" || true

[[ $failed == 0 ]] || { echo "install-pulumi: the Pulumi CLI could not be built" >&2; exit 1; }
echo "install-pulumi: $("$bin/pulumi" version) at $bin/pulumi"
