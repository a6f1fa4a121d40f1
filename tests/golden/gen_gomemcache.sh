#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gen_gomemcache.sh: writes gomemcache.golden (Go gomemcache, Debian
# golang-github-bradfitz-gomemcache-dev) in this folder. Installs golang-go,
# the gomemcache package and memcached if missing, builds
# gen_gomemcache_table.go offline against the Debian GOPATH
# (/usr/share/gocode, GO111MODULE=off), and runs five memcached servers on
# 127.0.97.1-5 (ports 21981-21985) to check the "gomemcache-confirm-5" case on
# real servers; they are stopped on exit.
# Requires root (apt-get, memcached -u nobody).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)

need=()
for p in golang-go golang-github-bradfitz-gomemcache-dev memcached; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [[ ${#need[@]} -gt 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}" ||
    { apt-get update -o DPkg::Lock::Timeout=600 &&
      apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}"; }
fi

pids=()
tmpdir="$(mktemp -d)"
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmpdir"
}
trap cleanup EXIT

ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }
versions="gomemcache (Debian golang-github-bradfitz-gomemcache-dev $(ver golang-github-bradfitz-gomemcache-dev), $(/usr/bin/go version | awk '{print $3}'))"

mkdir -p "$tmpdir/cache"
( cd "$tmpdir" &&
  env GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local \
      GOCACHE="$tmpdir/cache" CGO_ENABLED=0 \
      /usr/bin/go build -o "$tmpdir/gen_gomemcache_table" "$here/gen_gomemcache_table.go" )

for i in 1 2 3 4 5; do
  memcached -u nobody -l "127.0.97.$i" -p $((21980 + i)) -U 0 -m 64 &
  pids+=($!)
done
for i in 1 2 3 4 5; do
  ok=0
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.97.$i/$((21980 + i))") 2>/dev/null; then ok=1; break; fi
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null || break
    sleep 0.05
  done
  [[ $ok == 1 ]] || { echo "gen_gomemcache: memcached on 127.0.97.$i:$((21980 + i)) did not start" >&2; exit 1; }
done

"$tmpdir/gen_gomemcache_table" "$here/keys.txt" "$tmpdir/gomemcache.golden" "$versions" confirm
mv "$tmpdir/gomemcache.golden" "$here/gomemcache.golden"
echo "gen_gomemcache: done in $(( $(date +%s) - start )) s" >&2
