#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gen_php.sh: writes php_memcached.golden (php-memcached, new Memcached()) and
# php_memcache.golden (pecl memcache, new Memcache()) in this folder.
# Installs php-cli, php-memcached, php-memcache and memcached if missing, and
# runs five memcached servers on 127.0.99.1-5 (ports 21981-21985) to check
# the "*-confirm-5" cases on real servers; they are stopped on exit.
# Requires root (apt-get, memcached -u nobody).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)

need=()
for p in php-cli php-memcached php-memcache memcached; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [[ ${#need[@]} -gt 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}" ||
    { apt-get update -o DPkg::Lock::Timeout=600 &&
      apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}"; }
fi

ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }
phpv="$(php -r 'echo PHP_VERSION;')"
libmc="$(ver libmemcached11)"
v_memcached="php-memcached $(php -r 'echo phpversion("memcached");') (Debian php-memcached $(ver php-memcached), libmemcached $libmc, PHP $phpv)"
v_memcache="pecl memcache $(php -r 'echo phpversion("memcache");') (Debian php-memcache $(ver php-memcache), PHP $phpv)"

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
  memcached -u nobody -l "127.0.99.$i" -p $((21980 + i)) -U 0 -m 64 &
  pids+=($!)
done
for i in 1 2 3 4 5; do
  ok=0
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.99.$i/$((21980 + i))") 2>/dev/null; then ok=1; break; fi
    kill -0 "${pids[$((i - 1))]}" 2>/dev/null || break
    sleep 0.05
  done
  [[ $ok == 1 ]] || { echo "gen_php: memcached on 127.0.99.$i:$((21980 + i)) did not start" >&2; exit 1; }
done

php "$here/gen_php_memcached.php" "$here/keys.txt" "$tmpdir/php_memcached.golden" "$v_memcached" confirm
php "$here/gen_php_memcache.php" "$here/keys.txt" "$tmpdir/php_memcache.golden" "$v_memcache" confirm
mv "$tmpdir/php_memcached.golden" "$here/php_memcached.golden"
mv "$tmpdir/php_memcache.golden" "$here/php_memcache.golden"
echo "gen_php: done in $(( $(date +%s) - start )) s" >&2
