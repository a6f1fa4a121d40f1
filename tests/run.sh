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
#   tests/run.sh                 # everything
#   MEMSHARD_SANITIZERS=0 tests/run.sh   # the dev build only
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

jobs=${MEMSHARD_JOBS:-$(nproc 2>/dev/null || echo 2)}
presets=(dev)
extra_packages=()
if [ "${MEMSHARD_SANITIZERS:-1}" != 0 ]; then
  # The ASan+UBSan build uses clang++, so both compilers build everything;
  # the ThreadSanitizer build uses g++.
  presets+=(asan-ubsan tsan)
  extra_packages+=(clang libclang-rt-14-dev)
fi
"$root/scripts/install-deps.sh" "${extra_packages[@]}"

status=0
for preset in "${presets[@]}"; do
  echo "== memshard: $preset: configure and build" >&2
  phase_start=$SECONDS
  cmake --preset "$preset" >/dev/null
  build_args=(--preset "$preset" -j "$jobs")
  if [ "$preset" = tsan ]; then
    # ThreadSanitizer finds races: it needs only the tests whose code runs on
    # several threads (CTest label "threads").
    build_args+=(--target memshard_thread_tests)
  fi
  cmake --build "${build_args[@]}"
  if [ "$preset" = dev ]; then
    # Each public header compiles on its own.
    cmake --build --preset "$preset" -j "$jobs" --target all_verify_interface_header_sets
  fi
  echo "== memshard: $preset: configured and built in $((SECONDS - phase_start)) s; test" >&2
  phase_start=$SECONDS
  ctest_args=(--preset "$preset" -j "$jobs" --timeout 900)
  if [ "$preset" = tsan ]; then
    ctest_args+=(-L threads)
  elif [ "$preset" != dev ]; then
    # The package tests configure nested projects, and the soak is long (and
    # timed): the dev build covers them.
    ctest_args+=(-LE "package|soak")
  fi
  if ! ctest "${ctest_args[@]}"; then
    status=1
  fi
  echo "== memshard: $preset: tested in $((SECONDS - phase_start)) s" >&2
done
echo "== memshard: everything in $SECONDS s" >&2
exit "$status"
