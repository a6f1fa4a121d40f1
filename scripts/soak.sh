#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the soak (tests/soak_test.cpp) in the dev build and runs it for 30
# minutes with a random seed, which it prints first: random faults on 4 local
# memcached servers under load, checked by the history checker.
#
#   scripts/soak.sh                            # 30 minutes, a random seed
#   MEMSHARD_SOAK_SEED=42 scripts/soak.sh      # replay a seed's schedule
#   MEMSHARD_SOAK_SECONDS=300 scripts/soak.sh  # shorter
#   MEMSHARD_SOAK_FAILOVER=0 scripts/soak.sh   # fail-fast rounds only (else every other round fails over)
# Exit status: non-zero when the build fails or the soak finds a violation.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

jobs=${MEMSHARD_JOBS:-$(nproc 2>/dev/null || echo 2)}
seed=${MEMSHARD_SOAK_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
seconds=${MEMSHARD_SOAK_SECONDS:-1800}
echo "== memshard soak: MEMSHARD_SOAK_SEED=$seed MEMSHARD_SOAK_SECONDS=$seconds" >&2

"$root/scripts/install-deps.sh"
cmake --preset dev >/dev/null
cmake --build --preset dev -j "$jobs" --target soak_test
status=0
MEMSHARD_SOAK_SEED=$seed MEMSHARD_SOAK_SECONDS=$seconds \
  build/dev/tests/soak_test --gtest_filter='SoakTest.*' || status=$?
echo "== memshard soak: MEMSHARD_SOAK_SEED=$seed: exit $status" >&2
exit "$status"
