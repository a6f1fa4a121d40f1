#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# readback.sh: checks that the real clients read back what memshard's encoders
# write (see "Readback" in ../README.md). Run it directly; it writes readback.txt
# in this folder, the record of the last run, and exits 1 on any DIFF.
#
# Installs the clients' Debian packages, memcached and g++ when missing, runs one
# memcached server on 127.0.95.1:21981 (stopped on exit, whatever happens), then
#   1. compiles readback_write.cpp (memshard's codecs, header-only) and runs it: for
#      every case of every *.values table, each value of values.txt that the case
#      holds is encoded with the case's codec and settings (make_codec) and stored
#      raw under "rb:<case>:<value>"; a value the codec cannot encode is "not
#      written", with the codec's error;
#   2. runs each gen_values_<lang> script with --readback=MANIFEST: each client,
#      configured as its case says, stores the value itself under "<case>:<value>"
#      and reads memshard's item back, one line per item:
#        ok       read back equal to the value (same type: ===, ==, eql?, equals)
#        same     not equal to the value, but equal to what the client reads back
#                 from its own item (a client that does not keep the type)
#        refused  the client refuses to store the value itself (nothing to compare
#                 with); the line says what memshard's item reads back as
#        DIFF     anything else: memshard wrote what the client reads differently
#   3. prints per case the counts and writes readback.txt: the client versions and,
#      per case, the counts and every line that is not ok, with memshard's item
#      (flags, size, the start of its base64) on DIFF lines.
# Requires root (apt-get, memcached -u nobody). MEMSHARD_INCLUDE=DIR compiles the
# writer against the memshard headers in DIR instead of this checkout's include/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
# shellcheck source=../golden_lib.sh
source "$here/../golden_lib.sh"

golden_install memcached php-cli php-memcached php-igbinary php-msgpack php-memcache \
  libspymemcached-java python3-memcache python3-pymemcache python3-pylibmc \
  ruby ruby-dalli libcache-memcached-perl libcache-memcached-fast-perl \
  g++ zlib1g-dev libzstd-dev
command -v javac >/dev/null 2>&1 || golden_install default-jdk-headless
jar=/usr/share/java/spymemcached.jar
[[ -f "$jar" ]] || { echo "readback: $jar missing" >&2; exit 1; }

# ------------------------------------------------------------------ versions
# The same as gen_values.sh: the scripts take them as arguments, readback.txt
# records them.
php_v="PHP $(php -r 'echo PHP_VERSION;')"
py_v="Python $(/usr/bin/python3 -c 'import platform; print(platform.python_version())')"
perl_v="perl $(perl -e 'printf "%vd", $^V')"
versions=(
  "php_memcached=php-memcached $(php -r 'echo phpversion("memcached");') (Debian php-memcached $(golden_version php-memcached), libmemcached $(golden_version libmemcached11), php-igbinary $(golden_version php-igbinary), php-msgpack $(golden_version php-msgpack), $php_v)"
  "php_memcache=pecl memcache $(php -r 'echo phpversion("memcache");') (Debian php-memcache $(golden_version php-memcache), $php_v)"
  "spymemcached=spymemcached (Debian libspymemcached-java $(golden_version libspymemcached-java), $(java -version 2>&1 | head -n 1))"
  "python_memcache=python-memcache (Debian python3-memcache $(golden_version python3-memcache), $py_v)"
  "pymemcache=pymemcache $(/usr/bin/python3 -c 'import pymemcache; print(pymemcache.__version__)') (Debian python3-pymemcache $(golden_version python3-pymemcache), $py_v)"
  "pylibmc=pylibmc $(/usr/bin/python3 -c 'import pylibmc; print(pylibmc.__version__)') (Debian python3-pylibmc $(golden_version python3-pylibmc), libmemcached $(golden_version libmemcached11), $py_v)"
  "dalli=Dalli $(ruby -e 'require "dalli"; print Dalli::VERSION') (Debian ruby-dalli $(golden_version ruby-dalli), ruby $(ruby -e 'print RUBY_VERSION'))"
  "cache_memcached=Cache::Memcached $(perl -MCache::Memcached -e 'print $Cache::Memcached::VERSION') (Debian libcache-memcached-perl $(golden_version libcache-memcached-perl), $perl_v)"
  "cache_memcached_fast=Cache::Memcached::Fast $(perl -MCache::Memcached::Fast -e 'print $Cache::Memcached::Fast::VERSION') (Debian libcache-memcached-fast-perl $(golden_version libcache-memcached-fast-perl), $perl_v)"
)

# ------------------------------------------------------------------ writer
out="$golden_tmp/out"
mkdir -p "$out"
g++ -std=c++20 -O1 -I"${MEMSHARD_INCLUDE:-$repo/include}" -I"$repo/tests" "$here/readback_write.cpp" \
  -o "$golden_tmp/readback_write" -lz -lzstd

addr=127.0.95.1
port=21981
golden_start_servers readback 95 1   # 127.0.95.1:21981
manifest="$golden_tmp/manifest"
status=0
"$golden_tmp/readback_write" "$here" "$addr:$port" "$manifest" >"$out/writer" || status=1

# ------------------------------------------------------------------ clients
values="$here/values.txt"
args=("$values" "$addr:$port" "$golden_tmp" "${versions[@]}")
# A script that dies leaves its items without a line: the summary counts them as DIFF.
client() {
  local lang=$1 rc=0
  shift
  "$@" --readback="$manifest" "${args[@]}" >"$out/$lang" 2>"$golden_tmp/$lang.log" || rc=$?
  if [[ $rc != 0 ]]; then
    cat "$golden_tmp/$lang.log" >&2
    echo "readback: the $lang script exited with status $rc" >&2
    status=1
  fi
}
client php php "$here/gen_values_php.php"
client java java -cp "$jar" "$here/gen_values_java.java"
client python /usr/bin/python3 "$here/gen_values_python.py"
client ruby ruby "$here/gen_values_ruby.rb"
client perl perl "$here/gen_values_perl.pl"

# ------------------------------------------------------------------ summary
/usr/bin/python3 - "$manifest" "$here/readback.txt" "$out" "$(golden_version memcached)" \
  "${versions[@]}" <<'EOF' || status=1
import base64
import sys

manifest_path, record_path, out_dir, server = sys.argv[1:5]
versions = sys.argv[5:]
written = {}  # (case, value) -> (flags, base64)
with open(manifest_path, encoding="utf-8") as f:
    for line in f:
        case, name, flags, data = line.split()
        written[(case, name)] = (flags, data)

# Every case and value in table order (as the writer went), and each item's one
# result line.
cases, order, results = [], {}, {}
def add(status, case, name, line):
    if case not in cases:
        cases.append(case)
    if (case, name) in results:
        raise SystemExit("readback: two lines for %s %s" % (case, name))
    results[(case, name)] = (status, line)

with open(out_dir + "/writer", encoding="utf-8") as f:
    for line in f:
        words = line.split()
        at = 2 if words[0] == "not" else 1  # not written <case> <value>: ...
        order[(words[at], words[at + 1].rstrip(":"))] = len(order)
        if words[0] == "written":
            if words[1] not in cases:
                cases.append(words[1])
        elif words[0] == "not":  # not written <case> <value>: <error>
            add("not written", words[2], words[3].rstrip(":"), line.rstrip("\n"))
        else:  # FAILED <case> <value>: the server refused the item
            add("DIFF", words[1], words[2].rstrip(":"), line.rstrip("\n"))
def client_lines(path):
    """A script's lines; a line that starts with no status continues the one before
    (an error message of several lines)."""
    lines = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if lines and line.split(" ", 1)[0] not in ("ok", "same", "refused", "DIFF"):
                lines[-1] += " / " + line.strip()
            else:
                lines.append(line)
    return lines

for lang in ("php", "java", "python", "ruby", "perl"):
    for line in client_lines(out_dir + "/" + lang):
        status, case, name = line.split(" ", 3)[:3]
        name = name.rstrip(":")
        if status not in ("ok", "same", "refused", "DIFF"):
            raise SystemExit("readback: %s printed %r" % (lang, line))
        if status == "DIFF":
            flags, data = written.get((case, name), ("?", ""))
            size = len(base64.b64decode(data)) if data not in ("", "-") else 0
            line += " [memshard wrote flags %s, %d bytes, base64 %s%s]" % (
                flags, size, data[:96], "..." if len(data) > 96 else "")
        add(status, case, name, line)
for key in written:
    if key not in results:
        add("DIFF", key[0], key[1],
            "DIFF %s %s: no client script read it back" % key)

kinds = ("ok", "same", "refused", "not written", "DIFF")
record = [
    "# readback.txt: the last run of readback.sh (see \"Readback\" in tests/golden/README.md):",
    "# memshard's codecs encode each value of values.txt for each case of the value tables,",
    "# the real client configured as the case says reads the item back. Per case the counts,",
    "# then every line that is not ok. Written by readback.sh: do not edit.",
    "# server memcached %s" % server,
]
record += ["# client " + v.split("=", 1)[1] for v in versions]
failed = 0
for case in cases:
    lines = [results[k] for k in sorted((k for k in results if k[0] == case),
                                        key=lambda k: order.get(k, len(order)))]
    counts = {k: sum(1 for s, _ in lines if s == k) for k in kinds}
    failed += counts["DIFF"]
    summary = "case %s: %s" % (case, ", ".join("%s %d" % (k, counts[k]) for k in kinds))
    print(summary)
    record.append(summary)
    for status, line in lines:
        if status != "ok":
            record.append("  " + line)
            if status == "DIFF":
                print("  " + line)
total = {k: sum(1 for s, _ in results.values() if s == k) for k in kinds}
summary = "all: %s" % ", ".join("%s %d" % (k, total[k]) for k in kinds)
print(summary)
record.append(summary)
with open(record_path, "w", encoding="utf-8") as f:
    f.write("\n".join(record) + "\n")
sys.exit(1 if failed else 0)
EOF
exit "$status"
