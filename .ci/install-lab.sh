#!/bin/bash
# Installs what the lab's nodes need (test/lab/nodes): Debian's OpenSSH server and client,
# unshare/nsenter/mount (util-linux, mount), ps (procps), ip (iproute2); and etcd (etcd-server) for
# the fidelity test's real kube-apiserver (test/fidelity/kubeapiserver.ts). Idempotent and quiet;
# runs as root on a fresh Debian machine. The system's own sshd service is neither needed nor
# started: each lab node runs its own sshd on 127.0.0.x:22.
set -euo pipefail

packages=(openssh-server openssh-client util-linux mount procps iproute2 bash coreutils etcd-server openssl)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# Keep package scripts from starting services (the system sshd would take 0.0.0.0:22, etcd 2379).
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  own_policy=1
fi
cleanup() { if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi; }
trap cleanup EXIT

apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-lab: installed ${missing[*]}"
