#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/compile_time.sh: measures what memshard costs a user's translation unit
# to compile. Each unit of bench/compile_time/ (a reference unit that includes
# only the standard headers a client needs and libmemcached's; the umbrella
# header and an empty main; a typed client and a make_client client with one
# set and one get each; the same set and get with bare libmemcached) is
# compiled with $CXX -std=c++20 -O2 against the repository's include/ (no
# build, no install), in interleaved rounds: every round compiles every unit
# once, in an order that rotates from round to round, so that the noise of a
# shared machine falls on all units alike. The best (least) user CPU time of
# the compiler per unit is divided by the reference unit's and held to the
# targets below. Each unit is also linked with libmemcached and the text size
# of the binary recorded, and the umbrella unit is compiled once more with
# -ftime-report for the front end's share in template instantiation. The
# two client units are measured in "compiled mode" too (-DMEMSHARD_COMPILED_LIB:
# the headers declare, a library defines) when the headers offer it, that is
# when defining that macro changes what they preprocess to; otherwise those
# rows say n/a. A missed target is a result, not a failure: the script exits 0.
#
# Targets (user CPU time / the reference unit's):
#   umbrella                  <= 2.0x   #include <memshard/memshard.hpp>, empty main
#   typed_client              <= 5.0x   ShardedClient over profiles::libmemcached_ketama_weighted
#   make_client               <= 6.0x   make_client("libmemcached-ketama-weighted", ...)
#   typed_client_compiled     <= 2.5x   typed_client with -DMEMSHARD_COMPILED_LIB
#   make_client_compiled      <= 2.5x   make_client with -DMEMSHARD_COMPILED_LIB
#   libmemcached              (none)    the same set and get with libmemcached alone
#
# Usage: bench/compile_time.sh [--compiled | --header-only]
#   --compiled     fail (exit 2) when the headers do not offer compiled mode
#   --header-only  leave the compiled-mode rows out (n/a)
#   default: measure compiled mode when the headers offer it
#
# Environment:
#   MEMSHARD_RESULTS_DIR          results (default: <repo>/bench-results); this
#                                 script writes into its compile-time/
#   MEMSHARD_COMPILE_TIME_ROUNDS  interleaved rounds (default 3)
#   MEMSHARD_COMPILE_TIME_COMPILED  auto (default), 1 (as --compiled) or 0 (as
#                                 --header-only)
#   MEMSHARD_COMPILED_LIBS        link flags of the compiled library (e.g.
#                                 "-Lbuild -lmemshard"), to link the compiled-mode
#                                 units for their text size; without them that
#                                 size is n/a
#   CXX                           the compiler (default g++)
#
# Output: the table on stdout, progress on stderr; in the results directory
# compile_time.csv (unit, seconds, ratio, target, met, text_bytes),
# compile_time.json (the same with every round's time, the commit, the
# compiler's version, the date and the template-instantiation share),
# time_report.txt (-ftime-report of the umbrella unit) and the log of any
# compile or link that failed.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
results_dir=${MEMSHARD_RESULTS_DIR:-$repo/bench-results}/compile-time
rounds=${MEMSHARD_COMPILE_TIME_ROUNDS:-3}
compiled=${MEMSHARD_COMPILE_TIME_COMPILED:-auto}
cxx=${CXX:-g++}
units_dir=$repo/bench/compile_time

log() { printf 'memshard compile-time: %s\n' "$*" >&2; }

for arg in "$@"; do
  case $arg in
    --compiled) compiled=1 ;;
    --header-only) compiled=0 ;;
    -h | --help)
      sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      log "unknown argument: $arg (see --help)"
      exit 2
      ;;
  esac
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  log "MEMSHARD_COMPILE_TIME_ROUNDS must be a positive integer: '$rounds'"
  exit 2
fi
if ! [[ $compiled =~ ^(auto|0|1)$ ]]; then
  log "MEMSHARD_COMPILE_TIME_COMPILED must be auto, 0 or 1: '$compiled'"
  exit 2
fi

log "checking packages"
# binutils: size(1); the rest (g++, pkg-config, libmemcached-dev) is in the list
# every memshard script installs.
"$repo/scripts/install-deps.sh" binutils

read -r -a memcached_cflags <<<"$(pkg-config --cflags libmemcached)"
read -r -a memcached_libs <<<"$(pkg-config --libs libmemcached)"
read -r -a compiled_libs <<<"${MEMSHARD_COMPILED_LIBS:-}"
flags=(-std=c++20 -O2 "-I$repo/include" "${memcached_cflags[@]}")

work=$(mktemp -d "${TMPDIR:-/tmp}/memshard-compile-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$results_dir"
rm -f "$results_dir"/{compile_time.csv,compile_time.json,time_report.txt} "$results_dir"/*.log

# name|source|extra flag|target (empty: none)|what it is
units=(
  "reference|reference.cpp|||standard headers + libmemcached, empty main"
  "umbrella|umbrella.cpp||2.0|#include <memshard/memshard.hpp>, empty main"
  "typed_client|typed_client.cpp||5.0|ShardedClient + profiles::libmemcached_ketama_weighted, set, get"
  "make_client|make_client.cpp||6.0|make_client(\"libmemcached-ketama-weighted\"), set, get"
  "libmemcached|libmemcached.cpp|||libmemcached alone, set, get"
  "typed_client_compiled|typed_client.cpp|-DMEMSHARD_COMPILED_LIB|2.5|typed_client, compiled mode"
  "make_client_compiled|make_client.cpp|-DMEMSHARD_COMPILED_LIB|2.5|make_client, compiled mode"
)
field() { # field RECORD INDEX
  local -a parts
  IFS='|' read -r -a parts <<<"$1"
  printf '%s' "${parts[$2]:-}"
}

# Compiled mode exists when defining the macro changes what the headers
# preprocess to; a macro nothing reads would measure header-only code twice.
compiled_note=""
if [[ $compiled == 0 ]]; then
  compiled_note="not measured (--header-only)"
else
  log "does -DMEMSHARD_COMPILED_LIB change the headers?"
  "$cxx" "${flags[@]}" -E -P "$units_dir/typed_client.cpp" -o "$work/header_only.ii"
  "$cxx" "${flags[@]}" -DMEMSHARD_COMPILED_LIB -E -P "$units_dir/typed_client.cpp" -o "$work/compiled.ii"
  if cmp -s "$work/header_only.ii" "$work/compiled.ii"; then
    compiled_note="n/a: the headers do not offer it (-DMEMSHARD_COMPILED_LIB changes nothing)"
    if [[ $compiled == 1 ]]; then
      log "compiled mode asked for, but $compiled_note"
      exit 2
    fi
  fi
fi
measured=()
for record in "${units[@]}"; do
  if [[ -z $(field "$record" 2) || -z $compiled_note ]]; then
    measured+=("$record")
  fi
done
if [[ -n $compiled_note ]]; then
  log "compiled mode: $compiled_note"
fi

# compile RECORD: compiles the unit to $work/<name>.o; prints its user CPU
# seconds (bash's times of the compiler and every process it waited for).
compile() {
  local name source extra TIMEFORMAT=%3U
  name=$(field "$1" 0)
  source=$units_dir/$(field "$1" 1)
  extra=$(field "$1" 2)
  local -a command=("$cxx" "${flags[@]}" ${extra:+"$extra"} -c "$source" -o "$work/$name.o")
  if ! { time "${command[@]}" >"$work/$name.compile.log" 2>&1; } 2>"$work/$name.time"; then
    cp "$work/$name.compile.log" "$results_dir/$name.compile.log"
    log "$name does not compile (see $results_dir/$name.compile.log): ${command[*]}"
    tail -n 20 "$work/$name.compile.log" >&2
    return 1
  fi
  tail -n 1 "$work/$name.time"
}

declare -A times best
count=${#measured[@]}
for ((round = 0; round < rounds; round++)); do
  order=()
  for ((i = 0; i < count; i++)); do
    order+=("${measured[(i + round) % count]}")
  done
  log "round $((round + 1)) of $rounds: $(for r in "${order[@]}"; do printf '%s ' "$(field "$r" 0)"; done)"
  for record in "${order[@]}"; do
    name=$(field "$record" 0)
    seconds=$(compile "$record")
    times[$name]="${times[$name]:-}${times[$name]:+ }$seconds"
    if [[ -z ${best[$name]:-} ]] || awk -v a="$seconds" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
      best[$name]=$seconds
    fi
  done
done

# Text size of each unit linked into a program (libmemcached and, in compiled
# mode, the library of MEMSHARD_COMPILED_LIBS).
declare -A text
for record in "${measured[@]}"; do
  name=$(field "$record" 0)
  libs=("${memcached_libs[@]}")
  if [[ -n $(field "$record" 2) ]]; then
    if ((${#compiled_libs[@]} == 0)); then
      continue
    fi
    # the library calls libhashkit and starts a thread of its own (memshard-compiled.pc)
    libs=("${compiled_libs[@]}" "${libs[@]}" -lhashkit -pthread)
  fi
  if "$cxx" "$work/$name.o" -o "$work/$name" "${libs[@]}" >"$work/$name.link.log" 2>&1; then
    text[$name]=$(size -B "$work/$name" | awk 'NR == 2 { print $1 }')
  else
    cp "$work/$name.link.log" "$results_dir/$name.link.log"
    log "$name does not link (see $results_dir/$name.link.log); its text size is n/a"
  fi
done

log "-ftime-report of the umbrella unit"
template_share=""
if "$cxx" "${flags[@]}" -ftime-report -c "$units_dir/umbrella.cpp" -o "$work/time_report.o" \
  2>"$results_dir/time_report.txt"; then
  template_share=$(awk '
    /^ *\|?template instantiation *:/ { sub(/^[^:]*: */, ""); template = $1 }
    /^ *TOTAL *:/ { sub(/^[^:]*: */, ""); total = $1 }
    END { if (template != "" && total > 0) printf "%.3f", template / total }' "$results_dir/time_report.txt")
fi

# The table, the CSV and the JSON.
# number VALUE: VALUE for JSON, null when it is n/a or empty.
number() {
  if [[ $1 == n/a || -z $1 ]]; then
    printf null
  else
    printf '%s' "$1"
  fi
}
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
reference=${best[reference]}
csv=$results_dir/compile_time.csv
printf 'unit,seconds,ratio,target,met,text_bytes\n' >"$csv"
table=$(printf '%-22s %8s %7s %7s %7s %11s  %s\n' unit seconds ratio target result "text bytes" what)
unit_json=()
missed=()
for record in "${units[@]}"; do
  name=$(field "$record" 0)
  target=$(field "$record" 3)
  what=$(field "$record" 4)
  size_text=${text[$name]:-}
  if [[ -n ${best[$name]:-} ]]; then
    seconds=${best[$name]}
    read -r ratio met < <(awk -v s="$seconds" -v r="$reference" -v t="$target" 'BEGIN {
      ratio = s / r
      met = t == "" ? "" : (ratio <= t + 0 ? "yes" : "no")
      printf "%.4f %s\n", ratio, met }')
    shown_ratio=$(printf '%.2fx' "$ratio")
    all=$(printf '%s' "${times[$name]}" | tr ' ' ',')
    [[ $met == no ]] && missed+=("$name")
  else
    seconds="n/a" ratio="n/a" shown_ratio="n/a" all=""
    met=${target:+n/a}
  fi
  shown_target=${target:+<= ${target}x}
  shown_target=${shown_target:--}
  case $met in
    yes) result=met ;;
    no) result=MISSED ;;
    *) result=${met:--} ;;
  esac
  table+=$'\n'$(printf '%-22s %8s %7s %7s %7s %11s  %s' "$name" "$seconds" "$shown_ratio" \
    "$shown_target" "$result" "${size_text:-n/a}" "$what")
  printf '%s,%s,%s,%s,%s,%s\n' "$name" "$seconds" "$ratio" "$target" "$met" "${size_text:-n/a}" >>"$csv"
  unit_json+=("$(printf '{"unit": "%s", "what": %s, "seconds": %s, "all_seconds": [%s], "ratio": %s, "target": %s, "met": %s, "text_bytes": %s}' \
    "$name" "$(json_string "$what")" "$(number "$seconds")" "${all//,/, }" "$(number "$ratio")" \
    "$(number "$target")" "$(case $met in yes) echo true ;; no) echo false ;; *) echo null ;; esac)" \
    "$(number "$size_text")")")
done

commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$repo" status --porcelain -- include bench/compile_time 2>/dev/null) ]]; then
  commit+="-dirty"
fi
{
  printf '{\n'
  printf '  "commit": %s,\n' "$(json_string "$commit")"
  printf '  "compiler": %s,\n' "$(json_string "$("$cxx" --version | head -n 1)")"
  printf '  "command": %s,\n' "$(json_string "$cxx ${flags[*]//$repo\//} -c UNIT.cpp")"
  printf '  "date": %s,\n' "$(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
  printf '  "host": %s,\n' "$(json_string "$(hostname 2>/dev/null || echo unknown)")"
  printf '  "cpus": %s,\n' "$(nproc)"
  printf '  "load_average": %s,\n' "$(json_string "$(cut -d ' ' -f 1-3 /proc/loadavg)")"
  printf '  "rounds": %s,\n' "$rounds"
  printf '  "compiled_mode": %s,\n' "$(json_string "${compiled_note:-measured}")"
  printf '  "template_instantiation_share": %s,\n' "${template_share:-null}"
  printf '  "units": [\n'
  for ((i = 0; i < ${#unit_json[@]}; i++)); do
    printf '    %s%s\n' "${unit_json[i]}" "$( ((i + 1 < ${#unit_json[@]})) && echo ,)"
  done
  printf '  ]\n}\n'
} >"$results_dir/compile_time.json"

printf 'Compile time of one translation unit (%s, -std=c++20 -O2; best user CPU of %s interleaved rounds)\n\n' \
  "$("$cxx" --version | head -n 1)" "$rounds"
printf '%s\n\n' "$table"
printf 'ratio: seconds / the reference unit'"'"'s; text bytes: size(1) text of the unit linked with libmemcached.\n'
if [[ -n $template_share ]]; then
  printf 'umbrella unit: %.0f%% of the compiler'"'"'s time in template instantiation (-ftime-report).\n' \
    "$(awk -v s="$template_share" 'BEGIN { print 100 * s }')"
fi
if [[ -n $compiled_note ]]; then
  printf 'compiled mode: %s\n' "$compiled_note"
elif ((${#compiled_libs[@]} == 0)); then
  printf 'compiled mode: text bytes n/a (set MEMSHARD_COMPILED_LIBS to link the library)\n'
else
  printf 'compiled mode: linked with %s too\n' "${compiled_libs[*]}"
fi
if ((${#missed[@]} > 0)); then
  printf 'missed: %s\n' "${missed[*]}"
fi
printf 'files: %s/\n' "$results_dir"
