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
# shellcheck source=golden_lib.sh
source "$here/golden_lib.sh"

golden_install ruby ruby-dalli memcached

versions="Dalli $(ruby -e 'require "dalli"; print Dalli::VERSION') (Debian ruby-dalli $(golden_version ruby-dalli), ruby $(ruby -e 'print RUBY_VERSION'))"

golden_start_servers gen_dalli 98

ruby "$here/gen_dalli_table.rb" "$here/keys.txt" "$golden_tmp/dalli.golden" "$versions" confirm
mv "$golden_tmp/dalli.golden" "$here/dalli.golden"
echo "gen_dalli: done in $(( $(date +%s) - start )) s" >&2
