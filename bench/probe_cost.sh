#!/usr/bin/env bash
# Measures what a monitored call costs, side by side in one run: each
# configuration runs LOOPS times in a fresh process, interleaved, and the
# median and range of ns per monitored call are printed.
#   bash bench/probe_cost.sh [BUILD_DIR] [LOOPS] [CALLS] [DEPTH]
set -euo pipefail
build=${1:-build/release}
loops=${2:-7}
calls=${3:-2000000}
depth=${4:-10}
bin=$build/bench
lib=$(ls "$build"/src/monitor/libsonde.so)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SONDE_SUMMARY=false SONDE_OUT=$tmp/logs

# name | command (run with env)
configs=(
  "plain (no probes)|$bin/bench_probe_plain"
  "manual, monitoring off|env SONDE_ENABLED=false $bin/bench_probe_manual"
  "manual, operation excluded|env SONDE_PATTERNS=-bench.* $bin/bench_probe_manual"
  "manual, null writer|env SONDE_WRITER=null $bin/bench_probe_manual"
  "manual, native writer|env SONDE_WRITER=native $bin/bench_probe_manual"
  "cyg, glibc no-op hooks|$bin/bench_probe_cyg"
  "cyg, sonde preloaded, off|env SONDE_ENABLED=false LD_PRELOAD=$lib $bin/bench_probe_cyg"
  "cyg, sonde, null writer|env SONDE_WRITER=null LD_PRELOAD=$lib $bin/bench_probe_cyg"
  "cyg, sonde, native writer|env SONDE_WRITER=native LD_PRELOAD=$lib $bin/bench_probe_cyg"
)

for ((loop = 1; loop <= loops; loop++)); do
  for i in "${!configs[@]}"; do
    cmd=${configs[$i]#*|}
    rm -rf "$tmp/logs"
    $cmd "$calls" "$depth" >> "$tmp/$i"
  done
done

printf '%-30s %10s %10s %10s\n' configuration median min max
for i in "${!configs[@]}"; do
  name=${configs[$i]%%|*}
  sort -g "$tmp/$i" | awk -v name="$name" '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    printf "%-30s %10.2f %10.2f %10.2f\n", name, m, v[1], v[NR] }'
done
echo "ns per monitored call; $loops fresh processes per configuration, $calls calls of depth $depth, second half timed"
