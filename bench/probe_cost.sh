#!/usr/bin/env bash
# Measures what a monitored call costs, side by side in one run: each
# configuration runs LOOPS times in a fresh process, interleaved, and the
# median and range of ns per monitored call are printed, and for writing
# configurations the median log size in bytes per event.
#   bash bench/probe_cost.sh [BUILD_DIR] [LOOPS] [CALLS] [DEPTH]
# BASELINE=OTHER_BUILD_DIR adds that build's null and native writer
# configurations to the same interleaved run (e.g. a build of an older
# commit), so that before and after are measured under the same load.
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

if [[ -n ${BASELINE:-} ]]; then
  base_lib=$(ls "$BASELINE"/src/monitor/libsonde.so)
  configs+=(
    "baseline: manual, null writer|env SONDE_WRITER=null $BASELINE/bench/bench_probe_manual"
    "baseline: manual, native writer|env SONDE_WRITER=native $BASELINE/bench/bench_probe_manual"
    "baseline: cyg, null writer|env SONDE_WRITER=null LD_PRELOAD=$base_lib $BASELINE/bench/bench_probe_cyg"
    "baseline: cyg, native writer|env SONDE_WRITER=native LD_PRELOAD=$base_lib $BASELINE/bench/bench_probe_cyg"
  )
fi

for ((loop = 1; loop <= loops; loop++)); do
  for i in "${!configs[@]}"; do
    cmd=${configs[$i]#*|}
    rm -rf "$tmp/logs"
    $cmd "$calls" "$depth" >> "$tmp/$i"
    # Every call, warm-up included, is an enter and an exit per level.
    if [[ -d $tmp/logs ]]; then
      du -sb "$tmp/logs" | awk -v e=$((2 * calls * depth)) '{print $1 / e}' >> "$tmp/bytes$i"
    fi
  done
done

printf '%-32s %10s %10s %10s %12s\n' configuration median min max bytes/event
for i in "${!configs[@]}"; do
  name=${configs[$i]%%|*}
  bytes=-
  if [[ -s $tmp/bytes$i ]]; then
    bytes=$(sort -g "$tmp/bytes$i" | awk '{v[NR]=$1} END {printf "%.3f", v[int((NR+1)/2)]}')
  fi
  sort -g "$tmp/$i" | awk -v name="$name" -v bytes="$bytes" '{v[NR]=$1} END {
    m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
    printf "%-32s %10.2f %10.2f %10.2f %12s\n", name, m, v[1], v[NR], bytes }'
done
echo "ns per monitored call; $loops fresh processes per configuration, $calls calls of depth $depth, second half timed"
