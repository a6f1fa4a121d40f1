#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh: builds memshard's benchmarks in Release, runs them and prints one
# summary report on stdout. Progress goes to stderr; each benchmark's console
# output, the raw Google Benchmark JSON, one CSV per table, the charts (SVG,
# drawn by bench/plot.py with Debian's python3-matplotlib, which is installed
# when missing; without it the report says so) and summary.txt go to the
# results directory.
#
# The hit-rate and client benchmarks start their own memcached servers on
# 127.0.0.1 (ports from the kernel; the hit-rate benchmark starts a new set for
# each trial) and stop them when they end, fail or are interrupted; with
# MEMSHARD_SERVERS they use those servers instead and start none.
# The client benchmark also starts nutcracker (twemproxy) on 127.0.0.1 in front
# of those servers, and stops it when it ends; without nutcracker that
# contender is left out with a note in the report.
# The resize-through-time runs always start their own 5 local memcached servers
# (with a small memory limit, so MEMSHARD_SERVERS does not apply) and a SQLite
# database (libsqlite3-dev, installed when missing) in the temporary directory.
# The migration race starts its own 4 local memcached servers too, and the
# stampede benchmark 2, with 4 reader processes it forks for each of its arms.
# The coordination benchmark starts its own etcd (etcd-server, installed when
# missing) and 3 local memcached servers, with its fleet's members in process;
# the rollout benchmark its own etcd, 5 local memcached servers and 8 member
# processes for each of its two arms.
# The codec benchmark starts one local memcached (with MEMSHARD_SERVERS it uses
# the first of them) and PHP (bench/php/codecs_bench.php, with Debian's
# php-cli and php-memcached, installed when missing; without them the PHP
# comparisons are left out with a note in the report).
#
# The compile-time stage (bench/compile_time.sh, about two minutes of g++ on
# two cores) compiles a few small translation units against include/ and
# compares their compile times with a reference unit's; it writes into
# compile-time/ of the results directory.
#
# No benchmark flushes a server. Every key written starts with one prefix per
# run, MEMSHARD_BENCH_PREFIX (default: msb:<hex of the time and this script's
# pid>:), and each benchmark deletes its own keys: between its arms where it
# needs empty servers, and at the end. Before writing anything, each one reads
# every server's curr_items ("stats") and refuses to run on a server that is
# not empty: its writes could evict what is there, and that data's memory
# could get its own keys evicted, lowering the hit rates it measures.
# MEMSHARD_BENCH_ALLOW_NONEMPTY=1 runs anyway. With MEMSHARD_SERVERS this
# script checks that before the first benchmark. An interrupted run leaves its
# keys behind (under the prefix it logs).
#
# Environment:
#   MEMSHARD_BUILD_DIR          build tree (default: <repo>/build-bench)
#   MEMSHARD_RESULTS_DIR        results (default: <repo>/bench-results)
#   MEMSHARD_SERVERS            host:port,... real servers for the hit-rate and
#                               client runs (2 to 100; each must be empty, see
#                               above)
#   MEMSHARD_BENCH_PREFIX       the prefix of every key written (up to 32 of
#                               A-Za-z0-9:_.-; default: a new one per run)
#   MEMSHARD_BENCH_ALLOW_NONEMPTY  1: run on servers that hold items (default 0)
#   MEMSHARD_BENCH_SERVERS      local servers: before the resize, and for the
#                               client runs (default 4)
#   MEMSHARD_BENCH_ADDED        the hit-rate runs add 1 to this many servers
#                               (default 4 more local servers; with
#                               MEMSHARD_SERVERS 1, the last of the list)
#   MEMSHARD_BENCH_KEYS         keys per hit-rate trial (default 10000)
#   MEMSHARD_BENCH_HIT_TRIALS   hit-rate trials, each on new local servers, so
#                               on a new ring (default 10; with MEMSHARD_SERVERS
#                               always 1)
#   MEMSHARD_BENCH_REPETITIONS  runs of each lookup benchmark, median reported (default 5)
#   MEMSHARD_BENCH_MIN_TIME     seconds per lookup benchmark run (default 0.2)
#   MEMSHARD_BENCH_CLIENT_ROUNDS  interleaved rounds of the client runs (default 500)
#   MEMSHARD_BENCH_CODECS_ROUNDS  interleaved rounds of the codec runs against PHP
#                               (default 300)
#   MEMSHARD_RESIZE_TIME_SCALE  the resize-through-time runs: keys, server memory
#                               and window size times this (default 1: about 2
#                               minutes; 8: the model's 100,000 keys)
#   MEMSHARD_RESIZE_TIME_THREADS  their client threads (default 3)
#   MEMSHARD_COORDINATION_REST_SECONDS  how long the idle members are watched
#                               (default 20)
#   MEMSHARD_COORDINATION_CHANGES  reconfigures the 50 members follow (default 10)
#   MEMSHARD_MIGRATION_RACE_SCALE  the migration race: fresh migrations per arm
#                               times this (default 1: under a minute)
#   MEMSHARD_BENCH_COMPILE_TIME 1 (default): also measure the compile time of a
#                               user's translation unit; 0: skip
#   MEMSHARD_BENCH_CALLGRIND    1 (default): also count instructions per lookup
#                               and per client call with valgrind; 0: skip
#   MEMSHARD_MEMCACHED          the memcached binary to start (default: found by CMake)
#   MEMSHARD_NUTCRACKER         the nutcracker binary to start (default: from PATH)
#   MEMSHARD_PHP                the php binary to start (default: /usr/bin/php)
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${MEMSHARD_BUILD_DIR:-$repo/build-bench}
results_dir=${MEMSHARD_RESULTS_DIR:-$repo/bench-results}
repetitions=${MEMSHARD_BENCH_REPETITIONS:-5}
min_time=${MEMSHARD_BENCH_MIN_TIME:-0.2}
callgrind=${MEMSHARD_BENCH_CALLGRIND:-1}
compile_time=${MEMSHARD_BENCH_COMPILE_TIME:-1}

# Debian's python3 (installed below), not whichever python3 is first on PATH:
# the charts need Debian's python3-matplotlib.
python=/usr/bin/python3

log() { printf 'memshard bench: %s\n' "$*" >&2; }

# The benchmark process running now. Stopping it also stops the memcached
# servers it started (they die with it).
child=""
stop_child() {
  if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  child=""
}
trap stop_child EXIT
trap 'log "interrupted"; stop_child; exit 130' INT
trap 'log "terminated"; stop_child; exit 143' TERM

# run LOG COMMAND...: runs COMMAND with its output in LOG. In the background,
# so that a signal reaches this script (and the trap) at once.
run() {
  local out=$1
  shift
  "$@" >"$out" 2>&1 &
  child=$!
  local status=0
  wait "$child" || status=$?
  child=""
  if ((status != 0)); then
    log "failed (exit $status): $*"
    tail -n 20 "$out" >&2 || true
  fi
  return "$status"
}

deps=(python3 libsqlite3-dev etcd-server libcurl4-openssl-dev)
if [[ $callgrind == 1 ]]; then
  deps+=(valgrind)
fi
log "checking packages"
"$repo/scripts/install-deps.sh" "${deps[@]}"
# Optional: the twemproxy contender of the client benchmark.
if ! "$repo/scripts/install-deps.sh" nutcracker; then
  log "nutcracker not installed: the client benchmark runs without twemproxy"
fi
# Optional: PHP, the reference of the codec benchmark.
if ! "$repo/scripts/install-deps.sh" php-cli php-memcached; then
  log "php-cli or php-memcached not installed: the codec benchmark runs without PHP"
fi
# Optional: the charts.
if ! "$repo/scripts/install-deps.sh" python3-matplotlib; then
  log "python3-matplotlib not installed: the report comes without charts"
fi

mkdir -p "$results_dir"
rm -rf "$results_dir/callgrind" "$results_dir/callgrind_client" "$results_dir/compile-time"
rm -f "$results_dir"/{locate,balance,resize,properties,hit_rate,resize_time,client,fleet,migration_race,stampede,hot_keys,coordination,rollout,codecs}.{json,log} "$results_dir"/*.csv \
  "$results_dir"/*.svg "$results_dir"/{summary.txt,charts.txt,plot.log,configure.log,build.log,servers_check.log,compile_time.log}

log "configuring and building (Release) in $build_dir"
if ! run "$results_dir/configure.log" cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
  -DMEMSHARD_BUILD_TESTS=OFF -DMEMSHARD_BUILD_EXAMPLES=OFF -DMEMSHARD_BUILD_BENCHMARKS=ON; then
  exit 1
fi
if ! run "$results_dir/build.log" cmake --build "$build_dir" --target memshard_benchmarks -j2; then
  exit 1
fi
bench_dir=$build_dir/bench

failures=()

export MEMSHARD_BENCH_PREFIX=${MEMSHARD_BENCH_PREFIX:-$(printf 'msb:%08x%06x:' "$(date +%s)" "$$")}
if ! [[ $MEMSHARD_BENCH_PREFIX =~ ^[A-Za-z0-9:_.-]{1,32}$ ]]; then
  log "MEMSHARD_BENCH_PREFIX must be 1 to 32 of A-Za-z0-9:_.- : '$MEMSHARD_BENCH_PREFIX'"
  exit 1
fi
log "every key written starts with $MEMSHARD_BENCH_PREFIX"
if [[ -n ${MEMSHARD_SERVERS:-} ]]; then
  # Listing the hit-rate benchmarks names the servers and checks that they are
  # empty, and writes nothing.
  log "checking that MEMSHARD_SERVERS are empty"
  if ! run "$results_dir/servers_check.log" "$bench_dir/memshard_hit_rate_bench" \
    --benchmark_list_tests=true; then
    exit 1
  fi
fi

log "lookup cost ($repetitions runs of each, ${min_time} s)"
run "$results_dir/locate.log" "$bench_dir/memshard_locate_bench" \
  --benchmark_out="$results_dir/locate.json" --benchmark_out_format=json \
  --benchmark_repetitions="$repetitions" --benchmark_report_aggregates_only=true \
  --benchmark_enable_random_interleaving=true --benchmark_min_time="$min_time" \
  --benchmark_min_warmup_time=0.02 \
  --benchmark_context=memshard_repetitions="$repetitions" || failures+=(locate)

log "balance"
run "$results_dir/balance.log" env MEMSHARD_BENCH_LOADS_OUT="$results_dir/balance_loads.csv" \
  "$bench_dir/memshard_balance_bench" \
  --benchmark_out="$results_dir/balance.json" --benchmark_out_format=json || failures+=(balance)

log "movement on resize"
run "$results_dir/resize.log" "$bench_dir/memshard_resize_bench" \
  --benchmark_out="$results_dir/resize.json" --benchmark_out_format=json || failures+=(resize)

log "properties of a distribution (monotonicity, spread, load)"
run "$results_dir/properties.log" "$bench_dir/memshard_properties_bench" \
  --benchmark_out="$results_dir/properties.json" --benchmark_out_format=json || failures+=(properties)

log "the shared fleet (snapshot check, reconfigure)"
run "$results_dir/fleet.log" "$bench_dir/memshard_fleet_bench" \
  --benchmark_out="$results_dir/fleet.json" --benchmark_out_format=json \
  --benchmark_min_time="$min_time" || failures+=(fleet)

if [[ -n ${MEMSHARD_SERVERS:-} ]]; then
  log "hit rate on MEMSHARD_SERVERS"
else
  log "hit rate on $((${MEMSHARD_BENCH_SERVERS:-4} + ${MEMSHARD_BENCH_ADDED:-4})) local memcached servers, ${MEMSHARD_BENCH_HIT_TRIALS:-10} trials (new servers each)"
fi
run "$results_dir/hit_rate.log" "$bench_dir/memshard_hit_rate_bench" \
  --benchmark_out="$results_dir/hit_rate.json" --benchmark_out_format=json || failures+=(hit_rate)

if [[ -x $bench_dir/memshard_resize_time_bench ]]; then
  log "resize through time (cache-aside over SQLite on 5 local memcached servers)"
  run "$results_dir/resize_time.log" "$bench_dir/memshard_resize_time_bench" \
    --benchmark_out="$results_dir/resize_time.json" --benchmark_out_format=json || failures+=(resize_time)
else
  log "memshard_resize_time_bench not built (no SQLite3, see $results_dir/configure.log)"
fi

if [[ -n ${MEMSHARD_SERVERS:-} ]]; then
  log "ShardedClient against libmemcached on MEMSHARD_SERVERS (interleaved)"
else
  log "ShardedClient against libmemcached on ${MEMSHARD_BENCH_SERVERS:-4} local memcached servers (interleaved)"
fi
run "$results_dir/client.log" "$bench_dir/memshard_client_bench" \
  --benchmark_out="$results_dir/client.json" --benchmark_out_format=json || failures+=(client)

if [[ $callgrind == 1 ]] && command -v valgrind >/dev/null; then
  log "instructions per lookup (callgrind)"
  mkdir -p "$results_dir/callgrind"
  for filter in \
    'BM_Locate<KetamaMd5Weighted>/servers:10$' \
    'BM_Locate<KetamaMd5Weighted>/servers:1000$' \
    'BM_LocateLibmemcached<LibmemcachedKetamaWeighted>/servers:10$' \
    'BM_SearchOnly<KetamaMd5Weighted>/servers:10$' \
    'BM_SearchOnly<KetamaMd5Weighted>/servers:1000$' \
    'BM_Locate<ModuloOneAtATime>/servers:10$' \
    'BM_LocateLibmemcached<LibmemcachedModula>/servers:10$'; do
    slug=$(printf '%s' "${filter%\$}" | tr -c 'A-Za-z0-9' '_')
    out=$results_dir/callgrind/$slug
    # One timed pass (min time ~0): only timed_pass() is counted.
    run "$out.log" valgrind --tool=callgrind --toggle-collect='*timed_pass*' \
      --callgrind-out-file="$out.callgrind" "$bench_dir/memshard_locate_bench" \
      --benchmark_filter="$filter" --benchmark_min_time=0.000001 \
      --benchmark_out="$out.json" --benchmark_out_format=json || failures+=("callgrind $filter")
  done
  log "instructions per client call (callgrind)"
  mkdir -p "$results_dir/callgrind_client"
  # No timing: each contender runs alone between a zero and a dump of the
  # counts (one callgrind_client/client.callgrind.<n> file per contender).
  run "$results_dir/callgrind_client/client.log" env MEMSHARD_BENCH_CALLGRIND_OPS=2000 \
    valgrind --tool=callgrind --callgrind-out-file="$results_dir/callgrind_client/client.callgrind" \
    "$bench_dir/memshard_client_bench" || failures+=("callgrind client")
elif [[ $callgrind == 1 ]]; then
  log "valgrind not found: no instruction counts"
fi

log "migration race: concurrent readers and writers, stale reads (4 local memcached servers)"
run "$results_dir/migration_race.log" "$bench_dir/memshard_migration_race_bench" \
  --benchmark_out="$results_dir/migration_race.json" --benchmark_out_format=json || failures+=(migration_race)

log "hot keys: what counting them costs an operation, and which the sketch finds (no server)"
run "$results_dir/hot_keys.log" "$bench_dir/memshard_hot_keys_bench" \
  --benchmark_out="$results_dir/hot_keys.json" --benchmark_out_format=json \
  --benchmark_min_time="$min_time" || failures+=(hot_keys)

log "stampede: a hot key expiring under 64 readers in 4 processes, with and without a lease (2 local memcached servers)"
run "$results_dir/stampede.log" "$bench_dir/memshard_stampede_bench" \
  --benchmark_out="$results_dir/stampede.json" --benchmark_out_format=json || failures+=(stampede)

if [[ -x $bench_dir/memshard_coordination_bench ]]; then
  log "coordination through etcd: members at rest, a phase change reaching 50 members (a local etcd)"
  run "$results_dir/coordination.log" "$bench_dir/memshard_coordination_bench" \
    --benchmark_out="$results_dir/coordination.json" --benchmark_out_format=json || failures+=(coordination)
  log "rollout: a migration reaching 8 processes, coordinated through etcd or not (5 local memcached servers)"
  run "$results_dir/rollout.log" "$bench_dir/memshard_rollout_bench" \
    --benchmark_out="$results_dir/rollout.json" --benchmark_out_format=json || failures+=(rollout)
else
  log "memshard_coordination_bench not built (no libcurl: no memshard::fleet, see $results_dir/configure.log)"
fi

log "value codecs on a 20 KB string, against PHP (interleaved, 1 memcached server)"
run "$results_dir/codecs.log" "$bench_dir/memshard_codecs_bench" \
  --benchmark_out="$results_dir/codecs.json" --benchmark_out_format=json \
  --benchmark_min_time="$min_time" || failures+=(codecs)

if [[ $compile_time == 1 ]]; then
  log "compile time of a user's translation unit (g++ -O2, interleaved rounds)"
  run "$results_dir/compile_time.log" env MEMSHARD_RESULTS_DIR="$results_dir" \
    "$repo/bench/compile_time.sh" || failures+=(compile_time)
fi

# Charts are optional: without them the report says why.
log "charts"
if ! run "$results_dir/plot.log" "$python" "$repo/bench/plot.py" "$results_dir"; then
  log "no charts; the report follows without them"
fi

status=0
"$python" "$repo/bench/report" "$results_dir" || status=$?
if ((${#failures[@]} > 0)); then
  log "failed: ${failures[*]} (see the .log files in $results_dir)"
  exit 1
fi
exit "$status"
