#!/usr/bin/env bash
# The embedded store as it grows (issue 25: the UI's queries at 10^9
# records). For each size: RECORDS executions written as synthetic traces
# of three (bench_index_write: 16 interleaved processes, 40 operations),
# then every kind of query the UI sends, 20 times each
# (bench_store_queries: median, p95, max, and how many counts were
# estimated), and the store's size on disk.
#
# Usage: bash bench/store_scale.sh [BUILD_DIR=build/release] [OUT=build/store-scale] [RECORDS...]
#   RECORDS default: 1000000 10000000 100000000 1000000000. 10^9 records
#   write about 10 GB and take about half an hour on two cores. Each size's
#   store is removed after its queries unless STORE_SCALE_KEEP=1.
# Needs BUILD_DIR's benchmarks:
#   cmake --build BUILD_DIR --target bench_index_write bench_store_queries
# The queries run on a warm page cache (the store was just written), as a
# store that `sonde serve` has been answering from would be.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-build/store-scale}
shift $(($# < 2 ? $# : 2))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000 100000000 1000000000)
writer=$build/bench/bench_index_write
reader=$build/bench/bench_store_queries
for f in "$writer" "$reader"; do
  [ -x "$f" ] || {
    echo "store_scale: $f missing (cmake --build $build --target bench_index_write bench_store_queries)" >&2
    exit 2
  }
done
for records in "${sizes[@]}"; do
  [[ "$records" =~ ^[0-9]+$ ]] && [ "$records" -ge 30 ] || {
    echo "store_scale: RECORDS must be a whole number of at least 30, got '$records'" >&2
    exit 2
  }
done
mkdir -p "$out"
for records in "${sizes[@]}"; do
  traces=$((records / 3))
  dir=$out/$records
  echo "== $records records: $traces traces of 3 executions, into $dir"
  "$writer" "$dir" "$traces" 3 40 | tail -1
  "$reader" "$dir" 20
  echo "on disk: $(du -sb "$dir" | cut -f1) bytes"
  [ "${STORE_SCALE_KEEP:-0}" = 1 ] || rm -rf "$dir"
done
