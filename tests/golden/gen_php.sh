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
# shellcheck source=golden_lib.sh
source "$here/golden_lib.sh"

golden_install php-cli php-memcached php-memcache memcached

phpv="$(php -r 'echo PHP_VERSION;')"
libmc="$(golden_version libmemcached11)"
v_memcached="php-memcached $(php -r 'echo phpversion("memcached");') (Debian php-memcached $(golden_version php-memcached), libmemcached $libmc, PHP $phpv)"
v_memcache="pecl memcache $(php -r 'echo phpversion("memcache");') (Debian php-memcache $(golden_version php-memcache), PHP $phpv)"

golden_start_servers gen_php 99

php "$here/gen_php_memcached.php" "$here/keys.txt" "$golden_tmp/php_memcached.golden" "$v_memcached" confirm
php "$here/gen_php_memcache.php" "$here/keys.txt" "$golden_tmp/php_memcache.golden" "$v_memcache" confirm
mv "$golden_tmp/php_memcached.golden" "$here/php_memcached.golden"
mv "$golden_tmp/php_memcache.golden" "$here/php_memcache.golden"
echo "gen_php: done in $(( $(date +%s) - start )) s" >&2
