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
# shellcheck source=golden_lib.sh
source "$here/golden_lib.sh"

golden_install golang-go golang-github-bradfitz-gomemcache-dev memcached

versions="gomemcache (Debian golang-github-bradfitz-gomemcache-dev $(golden_version golang-github-bradfitz-gomemcache-dev), $(/usr/bin/go version | awk '{print $3}'))"

mkdir -p "$golden_tmp/cache"
( cd "$golden_tmp" &&
  env GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local \
      GOCACHE="$golden_tmp/cache" CGO_ENABLED=0 \
      /usr/bin/go build -o "$golden_tmp/gen_gomemcache_table" "$here/gen_gomemcache_table.go" )

golden_start_servers gen_gomemcache 97

"$golden_tmp/gen_gomemcache_table" "$here/keys.txt" "$golden_tmp/gomemcache.golden" "$versions" confirm
mv "$golden_tmp/gomemcache.golden" "$here/gomemcache.golden"
echo "gen_gomemcache: done in $(( $(date +%s) - start )) s" >&2
