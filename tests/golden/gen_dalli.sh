#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gen_dalli.sh: writes dalli.golden (Ruby Dalli, Debian ruby-dalli) in this
# folder. Installs ruby, ruby-dalli and memcached if missing, and runs five
# memcached servers on 127.0.98.1-5 (ports 21981-21985) to check the
# "*-confirm-5" cases on real servers; they are stopped on exit.
# Requires root (apt-get, memcached -u nobody).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)

need=()
for p in ruby ruby-dalli memcached; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [[ ${#need[@]} -gt 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}" ||
    { apt-get update -o DPkg::Lock::Timeout=600 &&
      apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}"; }
fi

ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }
versions="Dalli $(ruby -e 'require "dalli"; print Dalli::VERSION') (Debian ruby-dalli $(ver ruby-dalli), ruby $(ruby -e 'print RUBY_VERSION'))"

pids=()
tmpdir="$(mktemp -d)"
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmpdir"
}
trap cleanup EXIT

for i in 1 2 3 4 5; do
  memcached -u nobody -l "127.0.98.$i" -p $((21980 + i)) -U 0 -m 64 &
  pids+=($!)
done
for i in 1 2 3 4 5; do
  ok=0
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.98.$i/$((21980 + i))") 2>/dev/null; then ok=1; break; fi
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null || break
    sleep 0.05
  done
  [[ $ok == 1 ]] || { echo "gen_dalli: memcached on 127.0.98.$i:$((21980 + i)) did not start" >&2; exit 1; }
done

ruby "$here/gen_dalli_table.rb" "$here/keys.txt" "$tmpdir/dalli.golden" "$versions" confirm
mv "$tmpdir/dalli.golden" "$here/dalli.golden"
echo "gen_dalli: done in $(( $(date +%s) - start )) s" >&2
