#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gen_spymemcached.sh [output]: writes spymemcached.golden (default: beside this
# script) by compiling SpyPlacement.java against Debian's spymemcached and
# asking its own node locators (KetamaNodeLocator, ArrayModNodeLocator) where
# every key of keys.txt goes. No server is contacted. Run as root on Debian 12:
# installs libspymemcached-java and a JDK when missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/spymemcached.golden}"
jar=/usr/share/java/spymemcached.jar

need=()
status="$(dpkg-query -W -f='${Status}' libspymemcached-java 2>/dev/null || true)"
[[ "$status" == "install ok installed" ]] || need+=(libspymemcached-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
if [[ ${#need[@]} -gt 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends "${need[@]}"; then
    apt-get update
    apt-get install -y --no-install-recommends "${need[@]}"
  fi
fi
[[ -f "$jar" ]] || { echo "gen_spymemcached: $jar missing" >&2; exit 1; }

work="$(mktemp -d /tmp/gen_spymemcached.XXXXXX)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
javac -encoding UTF-8 -cp "$jar" -d "$work" "$here/SpyPlacement.java"

spy_version="$(dpkg-query -W -f='${Version}' libspymemcached-java)"
java_version="$(java -version 2>&1 | head -n 1)"
jdk_package="$( (dpkg -S "$(readlink -f "$(command -v java)")" 2>/dev/null || echo java) | cut -d: -f1 | head -n 1)"
jdk_version="$(dpkg-query -W -f='${Version}' "$jdk_package" 2>/dev/null || echo unknown)"

java -cp "$jar:$work" SpyPlacement "$here/keys.txt" "$out" \
  "$spy_version (Debian libspymemcached-java)" \
  "spymemcached.golden: where spymemcached's node locators put every key of keys.txt." \
  "Written by tests/golden/gen_spymemcached.sh (SpyPlacement.java calls getPrimary(key) of" \
  "spymemcached's own KetamaNodeLocator and ArrayModNodeLocator; no server is contacted)." \
  "Debian packages: libspymemcached-java $spy_version, $jdk_package $jdk_version ($java_version)." \
  "Keys: the lines of keys.txt decoded as UTF-8, passed as Java Strings." \
  "Ketama profiles: the server name (4th field) is the node key the locator hashed," \
  "read back from its KetamaNodeKeyFormatter (getKeyForNode(node, 0) less \"-0\")." \
  "Host names are InetSocketAddress.createUnresolved (the text of a failed lookup)," \
  "except localhost (resolved from /etc/hosts); IP literals are new InetSocketAddress(ip," \
  "port). Format.LIBMEMCACHED reverse-resolves IP literals (getHostName()), so its names" \
  "depend on the resolver: 127.0.0.1 became localhost, the others stayed literals." \
  "ArrayMod servers carry no name (nothing of the server is hashed)."
echo "gen_spymemcached: done in $((SECONDS - start)) s" >&2
