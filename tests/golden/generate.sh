#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# generate.sh [name...]: rewrites the golden tables from the real clients.
# Names: perl python twemproxy spymemcached php dalli gomemcache prefix values (default: all).
# Each generator installs the Debian packages it needs (as root, with apt-get)
# and starts and stops any memcached servers itself.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
all=(perl python twemproxy spymemcached php dalli gomemcache prefix values)
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${all[@]}")

/usr/bin/python3 "$here/make_keys.py" "$here/keys.txt"
for name in "${names[@]}"; do
  script="$(ls "$here"/gen_"$name".* "$here/$name"/gen_"$name".* 2>/dev/null | head -n 1 || true)"
  if [[ -z "$script" ]]; then
    echo "generate.sh: no generator named '$name' (known: ${all[*]})" >&2
    exit 2
  fi
  echo "== $name: $script" >&2
  "$script"
done
