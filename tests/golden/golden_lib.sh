# SPDX-License-Identifier: MIT
# golden_lib.sh: what the shell generators share, sourced by them.
#   golden_install PKG...         installs the Debian packages that are missing
#   golden_version PKG            a package's installed version
#   golden_start_servers WHO NET [COUNT]
#                                 starts COUNT (default five) memcached servers on
#                                 127.0.NET.1-COUNT, ports 21981 on, waits until each
#                                 accepts connections (bounded), and stops them on exit
# Every generator also gets $golden_tmp, a scratch folder removed on exit.

golden_install() {
  local need=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  [[ ${#need[@]} -gt 0 ]] || return 0
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}" ||
    { apt-get update -o DPkg::Lock::Timeout=600 &&
      apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends "${need[@]}"; }
}

golden_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }

golden_pids=()
golden_tmp="$(mktemp -d)"
golden_cleanup() {
  local pid
  for pid in "${golden_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${golden_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$golden_tmp"
}
trap golden_cleanup EXIT

golden_start_servers() {
  local who=$1 net=$2 count=${3:-5} i ok first=${#golden_pids[@]}
  for i in $(seq 1 "$count"); do
    memcached -u nobody -l "127.0.$net.$i" -p $((21980 + i)) -U 0 -m 64 &
    golden_pids+=($!)
  done
  for i in $(seq 1 "$count"); do
    ok=0
    for _ in $(seq 1 200); do
      if (exec 3<>"/dev/tcp/127.0.$net.$i/$((21980 + i))") 2>/dev/null; then ok=1; break; fi
      kill -0 "${golden_pids[$((first + i - 1))]}" 2>/dev/null || break
      sleep 0.05
    done
    if [[ $ok != 1 ]]; then
      echo "$who: memcached on 127.0.$net.$i:$((21980 + i)) did not start" >&2
      exit 1
    fi
  done
}
