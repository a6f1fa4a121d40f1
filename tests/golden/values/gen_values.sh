#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gen_values.sh: writes the value tables *.values in this folder (see "Value tables"
# in ../README.md): what every real client stores, as (flags, bytes), for each value
# of values.txt. Run it as `tests/golden/generate.sh values` or directly.
#
# Installs the clients' Debian packages and memcached when missing, runs one
# memcached server on 127.0.96.1:21981 (stopped on exit, whatever happens), then
#   php  gen_values_php.php       php-memcached, pecl memcache
#   java gen_values_java.java     spymemcached (the JDK's source-file launcher)
#   python3 gen_values_python.py  python-memcache, pymemcache, pylibmc
#   ruby gen_values_ruby.rb       Dalli
#   perl gen_values_perl.pl       Cache::Memcached, Cache::Memcached::Fast
# Each stores the values through its clients, reads them back through the same
# client, and writes a draft table whose `stored` lines values_collect.py replaces
# with the raw item read from the server with a text-protocol get. The tables are
# replaced only when every client ran. Requires root (apt-get, memcached -u nobody).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start=$(date +%s)
# shellcheck source=../golden_lib.sh
source "$here/../golden_lib.sh"

golden_install memcached php-cli php-memcached php-igbinary php-msgpack php-memcache \
  libspymemcached-java python3-memcache python3-pymemcache python3-pylibmc \
  ruby ruby-dalli libcache-memcached-perl libcache-memcached-fast-perl
command -v javac >/dev/null 2>&1 || golden_install default-jdk-headless
jar=/usr/share/java/spymemcached.jar
[[ -f "$jar" ]] || { echo "gen_values: $jar missing" >&2; exit 1; }

# ------------------------------------------------------------------ versions
v_server="memcached $(golden_version memcached)"
php_v="PHP $(php -r 'echo PHP_VERSION;')"
java_v="$(java -version 2>&1 | head -n 1)"
py_v="Python $(/usr/bin/python3 -c 'import platform; print(platform.python_version())')"
ruby_v="ruby $(ruby -e 'print RUBY_VERSION')"
perl_v="perl $(perl -e 'printf "%vd", $^V')"
versions=(
  "php_memcached=php-memcached $(php -r 'echo phpversion("memcached");') (Debian php-memcached $(golden_version php-memcached), libmemcached $(golden_version libmemcached11), php-igbinary $(golden_version php-igbinary), php-msgpack $(golden_version php-msgpack), $php_v)"
  "php_memcache=pecl memcache $(php -r 'echo phpversion("memcache");') (Debian php-memcache $(golden_version php-memcache), $php_v)"
  "spymemcached=spymemcached (Debian libspymemcached-java $(golden_version libspymemcached-java), $java_v)"
  "python_memcache=python-memcache (Debian python3-memcache $(golden_version python3-memcache), $py_v)"
  "pymemcache=pymemcache $(/usr/bin/python3 -c 'import pymemcache; print(pymemcache.__version__)') (Debian python3-pymemcache $(golden_version python3-pymemcache), $py_v)"
  "pylibmc=pylibmc $(/usr/bin/python3 -c 'import pylibmc; print(pylibmc.__version__)') (Debian python3-pylibmc $(golden_version python3-pylibmc), libmemcached $(golden_version libmemcached11), $py_v)"
  "dalli=Dalli $(ruby -e 'require "dalli"; print Dalli::VERSION') (Debian ruby-dalli $(golden_version ruby-dalli), $ruby_v)"
  "cache_memcached=Cache::Memcached $(perl -MCache::Memcached -e 'print $Cache::Memcached::VERSION') (Debian libcache-memcached-perl $(golden_version libcache-memcached-perl), $perl_v)"
  "cache_memcached_fast=Cache::Memcached::Fast $(perl -MCache::Memcached::Fast -e 'print $Cache::Memcached::Fast::VERSION') (Debian libcache-memcached-fast-perl $(golden_version libcache-memcached-fast-perl), $perl_v)"
)
for i in "${!versions[@]}"; do versions[i]="${versions[i]}; server $v_server"; done
tables=(php_memcached php_memcache spymemcached python_memcache pymemcache pylibmc dalli
        cache_memcached cache_memcached_fast)

# ------------------------------------------------------------------ server
addr=127.0.96.1
port=21981
golden_start_servers gen_values 96 1   # 127.0.96.1:21981

# ------------------------------------------------------------------ clients
drafts="$golden_tmp/drafts"
tables_dir="$golden_tmp/tables"
mkdir -p "$drafts" "$tables_dir"
values="$here/values.txt"
php "$here/gen_values_php.php" "$values" "$addr:$port" "$drafts" "${versions[@]}"
java -cp "$jar" "$here/gen_values_java.java" "$values" "$addr:$port" "$drafts" "${versions[@]}"
/usr/bin/python3 "$here/gen_values_python.py" "$values" "$addr:$port" "$drafts" "${versions[@]}"
ruby "$here/gen_values_ruby.rb" "$values" "$addr:$port" "$drafts" "${versions[@]}"
perl "$here/gen_values_perl.pl" "$values" "$addr:$port" "$drafts" "${versions[@]}"

for t in "${tables[@]}"; do
  /usr/bin/python3 "$here/values_collect.py" "$values" "$addr:$port" "$drafts/$t.values" \
    "$tables_dir/$t.values"
done
for t in "${tables[@]}"; do mv "$tables_dir/$t.values" "$here/$t.values"; done
echo "gen_values: done in $(( $(date +%s) - start )) s" >&2
