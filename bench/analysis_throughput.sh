#!/usr/bin/env bash
# Trace-analysis throughput: records per second and peak memory of
# `sonde traces --summary` (reconstruction + counts) and `sonde summary`
# (reconstruction + per-operation statistics) over one MooBench-shaped log
# (depth-DEPTH recursion, CALLS traces), in sonde's native format and
# converted to Kieker .bin and .dat. Each configuration runs LOOPS times,
# interleaved; median and range are printed.
#   bash bench/analysis_throughput.sh [BUILD_DIR] [LOOPS] [CALLS] [DEPTH]
set -euo pipefail
build=${1:-build/release}
loops=${2:-5}
calls=${3:-1000000}
depth=${4:-10}
sonde=$build/src/cli/sonde
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

SONDE_SUMMARY=false SONDE_OUT=$tmp/native SONDE_WRITER=native \
  "$build/bench/bench_probe_manual" "$calls" "$depth" > /dev/null
native=$(ls "$tmp"/native/*.sonde)
"$sonde" convert "$native" "$tmp/bin" --to kieker-bin > /dev/null
"$sonde" convert "$native" "$tmp/dat" --to kieker-dat > /dev/null
records=$("$sonde" traces "$native" --summary --json | sed -n 's/^  "records": \([0-9]*\),$/\1/p')
echo "log: $records records ($calls traces of depth $depth); native $(du -h "$native" | cut -f1)," \
  "Kieker .bin $(du -sh "$tmp/bin" | cut -f1), .dat $(du -sh "$tmp/dat" | cut -f1)"

configs=(
  "native, traces --summary|traces $native --summary"
  "native, summary|summary $native"
  "kieker .bin, traces --summary|traces $tmp/bin --summary"
  "kieker .dat, traces --summary|traces $tmp/dat --summary"
)
for ((loop = 1; loop <= loops; loop++)); do
  for i in "${!configs[@]}"; do
    args=${configs[$i]#*|}
    # GNU time: elapsed seconds and peak RSS in KiB.
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$sonde" $args > /dev/null
    cat "$tmp/t" >> "$tmp/$i"
  done
done

printf '%-32s %14s %14s %14s %12s\n' configuration "median rec/s" "min rec/s" "max rec/s" "peak RSS"
for i in "${!configs[@]}"; do
  name=${configs[$i]%%|*}
  sort -n "$tmp/$i" | awk -v n="$name" -v r="$records" '
    { t[NR] = $1; if ($2 > rss) rss = $2 }
    END {
      med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "%-32s %14.3g %14.3g %14.3g %9.0f MiB\n", n, r / med, r / t[NR], r / t[1], rss / 1024
    }'
done
