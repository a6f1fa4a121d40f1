#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds memshard and runs every test: the dev build with g++ (all tests,
# warnings as errors), then the AddressSanitizer+UBSan build with clang++ (all
# but the package tests and placement's conformance tests, whose code its
# fuzzers run) and the ThreadSanitizer build (the tests whose code runs on
# several threads); both sanitizer builds compile their tests at -O0.
# Installs missing Debian packages first. Exit status: non-zero when any build
# or test fails.
#
# Two chains run side by side once the dev build is done. The tests mostly wait
# on servers, sockets and deadlines and leave much of the CPU idle, so the
# builds that follow (each sanitizer build, then the dev build's header check,
# which no test run waits for) compile one after another in the background at
# the lowest CPU priority (nice 19), taking only what the tests leave; the test
# runs follow one after another, each as soon as its build is done (never two
# at once, so timed tests do not compete with each other). Each step's output
# is kept in a log and printed whole when the step ends.
#
#   tests/run.sh                 # everything
#   MEMSHARD_SANITIZERS=0 tests/run.sh   # the dev build only
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

jobs=${MEMSHARD_JOBS:-$(nproc 2>/dev/null || echo 2)}
presets=(dev)
# lld: the presets link with it (MEMSHARD_LINKER).
extra_packages=(lld)
if [ "${MEMSHARD_SANITIZERS:-1}" != 0 ]; then
  # The ASan+UBSan build uses clang++, so both compilers build everything;
  # the ThreadSanitizer build uses g++.
  presets+=(asan-ubsan tsan)
  extra_packages+=(clang libclang-rt-14-dev)
fi
"$root/scripts/install-deps.sh" "${extra_packages[@]}"

logs=$(mktemp -d "${TMPDIR:-/tmp}/memshard-tests.XXXXXX")
tests_pid=""
builder_pid=""
stop_all() {
  # Each background chain runs in a process group of its own (set -m below).
  local pid
  for pid in "$tests_pid" "$builder_pid"; do
    if [ -n "$pid" ]; then
      kill -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$logs"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

status=0

# build PRESET [NICE]: configures and builds one preset (NICE: at nice 19).
build() {
  local preset=$1 niceness=${2:-0} start=$SECONDS
  local args=(--preset "$preset" -j "$jobs")
  echo "== memshard: $preset: configure and build" >&2
  local configure=(--preset "$preset")
  if [ "$preset" = dev ]; then
    # Line tables only (the sanitizer presets do the same): enough for every report and
    # backtrace a test run gives, and about a tenth less compile time than full debug
    # information. `cmake --preset dev -DCMAKE_CXX_FLAGS_DEBUG=-g` gives it back.
    configure+=(-DCMAKE_CXX_FLAGS_DEBUG=-g1)
  fi
  nice -n "$niceness" cmake "${configure[@]}" >/dev/null || return 1
  if [ "$preset" = tsan ]; then
    # ThreadSanitizer finds races: it needs only the tests whose code runs on
    # several threads (CTest label "threads").
    args+=(--target memshard_thread_tests)
  fi
  nice -n "$niceness" cmake --build "${args[@]}" || return 1
  echo "== memshard: $preset: configured and built in $((SECONDS - start)) s" >&2
}

# header_check: each public header compiles on its own (the dev build's), at nice 19.
header_check() {
  local start=$SECONDS
  echo "== memshard: dev: each public header on its own" >&2
  nice -n 19 cmake --build --preset dev -j "$jobs" --target all_verify_interface_header_sets \
    || return 1
  echo "== memshard: dev: headers checked in $((SECONDS - start)) s" >&2
}

# builder: the background chain: each sanitizer build, then the header check; step STEP
# writes its output to $logs/STEP.log, then its exit status to $logs/STEP.rc. A failed
# build ends the chain (the steps after it never get a status).
builder() {
  local step rc
  for step in "${presets[@]:1}" headers; do
    rc=0
    if [ "$step" = headers ]; then
      header_check >"$logs/$step.log" 2>&1 || rc=$?
    else
      build "$step" 19 >"$logs/$step.log" 2>&1 || rc=$?
    fi
    echo "$rc" >"$logs/$step.rc"
    if [ "$rc" != 0 ]; then
      return
    fi
  done
}

# await STEP: waits for the builder's step STEP and prints its output; fails when the step
# failed or the builder ended without it.
await() {
  local step=$1
  while [ ! -e "$logs/$step.rc" ]; do
    if ! kill -0 "$builder_pid" 2>/dev/null && [ ! -e "$logs/$step.rc" ]; then
      echo "== memshard: $step: the build chain ended before it" >&2
      return 1
    fi
    # Polls the file the step writes last (at most a second late).
    sleep 1
  done
  cat "$logs/$step.log" >&2
  [ "$(cat "$logs/$step.rc")" = 0 ]
}

# start_tests PRESET: runs the preset's tests in the background, into a log.
start_tests() {
  local preset=$1
  local args=(--preset "$preset" -j "$jobs" --timeout 900)
  if [ "$preset" = tsan ]; then
    args+=(-L threads)
  elif [ "$preset" != dev ]; then
    # The package tests configure nested projects, the soak is long (and
    # timed), and the documentation's blocks compile alike in every build: the
    # dev build covers them.
    args+=(-LE "package|soak|docs")
  fi
  echo "== memshard: $preset: test (output below when the run ends)" >&2
  tests_started=$SECONDS
  tests_preset=$preset
  ctest "${args[@]}" >"$logs/$preset.log" 2>&1 &
  tests_pid=$!
}

# finish_tests: waits for the tests start_tests started and prints their output.
finish_tests() {
  local rc=0
  wait "$tests_pid" || rc=$?
  tests_pid=""
  cat "$logs/$tests_preset.log"
  if [ "$rc" != 0 ]; then
    status=1
    # Kept for the summary at the end, where a log's tail shows it: the failed
    # tests' names (CTest's list), each with the last lines of its output.
    {
      echo "== memshard: $tests_preset: failed (exit status $rc):"
      sed -n '/^The following tests FAILED:/,$p' "$logs/$tests_preset.log"
      local name
      for name in $(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (.*/\1/p' \
        "$logs/$tests_preset.log"); do
        echo "-- $name: the end of its output"
        awk -v name="$name" '
          /^ *Start +[0-9]+: / || /^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: / || /% tests passed/ { keep = 0 }
          /^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: / && index($0, ": " name " ") { keep = 1; next }
          keep { lines[n++ % 40] = $0 }
          END { for (i = (n > 40 ? n - 40 : 0); i < n; i++) print lines[i % 40] }
        ' "$logs/$tests_preset.log"
      done
    } >>"$logs/failures.txt"
  fi
  echo "== memshard: $tests_preset: tested in $((SECONDS - tests_started)) s" \
    "(exit status $rc)" >&2
}

build dev
# Each background job in a process group of its own, which stop_all ends whole.
set -m
start_tests dev
builder &
builder_pid=$!
set +m
finish_tests
for preset in "${presets[@]:1}"; do
  if ! await "$preset"; then
    exit 1
  fi
  set -m
  start_tests "$preset"
  set +m
  finish_tests
done
if ! await headers; then
  exit 1
fi
wait "$builder_pid" || true
builder_pid=""
if [ -s "$logs/failures.txt" ]; then
  cat "$logs/failures.txt" >&2
fi
echo "== memshard: everything in $SECONDS s" >&2
exit "$status"
