#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gen_prefix.sh: writes the key-prefix tables in prefix/ (see "Prefix tables"
# in README.md): where real clients put keys stored with a key prefix or
# namespace, and that the key on the wire is exactly prefix+key.
#   prefix/php_memcached.golden         php-memcached, OPT_PREFIX_KEY (gen_prefix_php.php)
#   prefix/dalli.golden                 Ruby Dalli, namespace: (gen_prefix_dalli.rb)
#   prefix/cache_memcached_fast.golden  Cache::Memcached::Fast, namespace => (gen_prefix_perl.pl)
# Installs php-cli, php-memcached, ruby, ruby-dalli, libcache-memcached-fast-perl
# and memcached if missing, and runs five memcached servers on 127.0.97.1-5
# (ports 21981-21985), stopped on exit; every case is recorded on them.
# Requires root (apt-get, memcached -u nobody).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
# shellcheck source=golden_lib.sh
source "$here/golden_lib.sh"

golden_install php-cli php-memcached ruby ruby-dalli libcache-memcached-fast-perl memcached

v_server="memcached $(golden_version memcached)"
v_php="php-memcached $(php -r 'echo phpversion("memcached");') (Debian php-memcached $(golden_version php-memcached), libmemcached $(golden_version libmemcached11), PHP $(php -r 'echo PHP_VERSION;')); servers: $v_server"
v_dalli="Dalli $(ruby -e 'require "dalli"; print Dalli::VERSION') (Debian ruby-dalli $(golden_version ruby-dalli), ruby $(ruby -e 'print RUBY_VERSION')); servers: $v_server"
v_cmf="Cache::Memcached::Fast $(perl -MCache::Memcached::Fast -e 'print $Cache::Memcached::Fast::VERSION') (Debian libcache-memcached-fast-perl $(golden_version libcache-memcached-fast-perl), perl $(perl -e 'printf "%vd", $^V')); servers: $v_server"

net=127.0.97
golden_start_servers gen_prefix 97

php "$here/gen_prefix_php.php" "$here/keys.txt" "$golden_tmp/php_memcached.golden" "$v_php" "$net"
ruby "$here/gen_prefix_dalli.rb" "$here/keys.txt" "$golden_tmp/dalli.golden" "$v_dalli" "$net"
perl "$here/gen_prefix_perl.pl" "$here/keys.txt" "$golden_tmp/cache_memcached_fast.golden" "$v_cmf" "$net"

mkdir -p "$here/prefix"
for t in php_memcached dalli cache_memcached_fast; do
  mv "$golden_tmp/$t.golden" "$here/prefix/$t.golden"
done
echo "gen_prefix: done in $(( $(date +%s) - start )) s" >&2
