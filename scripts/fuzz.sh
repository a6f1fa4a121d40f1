#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target of tests/fuzz/ for longer than the CTest smoke
# tests do: each for MEMSHARD_FUZZ_SECONDS (default 600) in turn, starting from
# its committed seed corpus (tests/fuzz/corpus/<name>/, only read) and growing
# its own corpus under build/asan-ubsan/fuzz-corpus/<name>/; crashes, leaks and
# timeouts are written there as crash-*, leak-*, timeout-* files. Configures
# and builds the asan-ubsan preset's fuzz targets first (clang++).
# Exit status: non-zero when any target found a problem.
#
#   scripts/fuzz.sh                              # every target, 10 min each
#   MEMSHARD_FUZZ_SECONDS=60 scripts/fuzz.sh key server_list   # two targets, 1 min each
#   MEMSHARD_FUZZ_JOBS=2 scripts/fuzz.sh locators              # two fuzzing processes
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

seconds=${MEMSHARD_FUZZ_SECONDS:-600}
jobs=${MEMSHARD_FUZZ_JOBS:-1}
build="$root/build/asan-ubsan"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(meta_protocol server_list key locators profiles health tools)
fi

cmake --preset asan-ubsan >/dev/null
cmake --build --preset asan-ubsan -j"${MEMSHARD_JOBS:-2}" \
  --target "${targets[@]/%/_fuzz}"

status=0
for name in "${targets[@]}"; do
  binary="$build/tests/fuzz/${name}_fuzz"
  corpus="$build/fuzz-corpus/$name"
  mkdir -p "$corpus"
  args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$corpus/")
  if [ -f "$root/tests/fuzz/$name.dict" ]; then
    args+=(-dict="$root/tests/fuzz/$name.dict")
  fi
  if [ "$jobs" -gt 1 ]; then
    args+=(-fork="$jobs")
  fi
  echo "== memshard fuzz: $name for ${seconds}s, corpus $corpus" >&2
  if ! "$binary" "${args[@]}" "$corpus" "$root/tests/fuzz/corpus/$name"; then
    echo "== memshard fuzz: $name FAILED (see $corpus/crash-* and the log above)" >&2
    status=1
  fi
done
exit "$status"
