#!/usr/bin/env bash
# The sanitizer builds scripts/test.sh runs its tests in: ASan + UBSan
# (build/asan) and ThreadSanitizer (build/tsan, the monitor tests only).
# scripts/test.sh runs this after its timing-sensitive stages (see there).
# Usage: bash scripts/build-sanitizers.sh [--full]
#   --full  every target under ASan + UBSan, not only the layers below
set -euo pipefail
cd "$(dirname "$0")/.."
# Stage times continue the caller's clock (scripts/test.sh passes it).
SECONDS=${SECONDS_BEFORE:-0}

# One compile job per core (scripts/test.sh says why).
jobs=$(nproc)
stage() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*"; }

# Under the sanitizers: the layers whose code runs inside users' programs
# or reads untrusted bytes (the probe library and its samplers, the record
# formats, statistics, the analysis of logs, the trace store, the
# collector's network input). The CLI, diagnosis, web-server, browser and
# soak tests run in the -Werror build; under the sanitizers they are
# mostly process orchestration, and took 61 % of the sanitized test time
# (724 of 1,180 test-seconds in a fresh clone's run, 2026-12-01) and a
# third of the sanitized build, for memory-safety coverage that the
# layers' own tests and the fuzzers mostly give already. CI's time limit
# decides: see DEVELOPERS.md, "Where CI's time goes".
# fuzz_replays: every fuzz harness fed its seeds, past crashes, truncations
# and mutations (fuzz/replay.cmake), under the sanitizers, as ctest tests.
# scripts/test.sh selects the same layers' tests by label.
sanitized_targets=(monitor_tests samplers_tests format_tests stats_tests analysis_tests
  store_tests collect_tests fuzz_replays)
if [ "${1:-}" = "--full" ]; then sanitized_targets=(all); fi

stage "build (ASan + UBSan)"
# -g1: line tables are all the sanitizers' reports use; full DWARF only
# lengthens the build. -O0: g++ 12 compiles sanitized code at -O1 3.5x
# slower than at -O0 (69.6 s against 19.4 s for sonde_diagnose's first
# batch, 219 s against 47 s for diagnose_tests' first, 2026-11-28), which
# cost CI more than the faster tests saved (55 min against 42).
# -DSONDE_BUILD_BENCH=OFF: the benchmarks no test runs are built once, in
# the release build.
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSONDE_WERROR=ON -DSONDE_BUILD_BENCH=OFF \
  -DSONDE_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1"
cmake --build build/asan -j "$jobs" --target "${sanitized_targets[@]}"

stage "build (TSan, monitor and collector tests)"
# At the build's -O2: -O1 was measured (2026-12-02) a wash, its build
# 35-55 s shorter and its run 31 s longer (DEVELOPERS.md).
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSONDE_WERROR=ON \
  -DSONDE_BUILD_BENCH=OFF -DSONDE_SANITIZE=thread
# collect_tests: the collector's listener and analysis workers share
# clients, counts and the index (src/collect/collector.hpp).
cmake --build build/tsan -j "$jobs" --target monitor_tests collect_tests
stage "sanitizer builds done"
