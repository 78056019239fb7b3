#!/usr/bin/env bash
# The flight recorder on a real server for MINUTES under continuous load,
# with the context trigger armed (docs/flight-recorder.md):
#   1. a training run of the ledger example (thread per connection, built
#      with -finstrument-functions) under `sonde run`, 30 s of `sonde load`
#      at 6 users, and its calling-context model (`sonde context
#      --save-model`);
#   2. the flight run: the ledger under `sonde run` with flight = on and
#      that model, LEDGER_FLAGS passed on (e.g. --forecast-cpu plants a
#      slow context), the same load for MINUTES; the ledger's resident
#      memory sampled every 30 s and a snapshot asked for every 10 minutes
#      with `sonde snapshot`;
#   3. a table: resident memory over time, every snapshot with its reason,
#      and libsonde's exit summary.
# Usage: bash bench/flight_soak.sh [BUILD_DIR] [MINUTES] [LEDGER_FLAGS...]
# Needs BUILD_DIR's sonde and examples/ledger (cmake --build BUILD_DIR
# --target sonde_cli ledger). Writes BUILD_DIR/flight-soak/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
minutes=${2:-60}
shift $(($# < 2 ? $# : 2))
sonde=$build/src/cli/sonde
ledger=$build/examples/ledger
for f in "$sonde" "$ledger"; do
  [ -x "$f" ] || { echo "flight_soak: $f not built (cmake --build $build --target sonde_cli ledger)" >&2; exit 2; }
done
work=$build/flight-soak
rm -rf "$work"
mkdir -p "$work"
port=18191
profile=scenarios/ledger/profile.json
export SONDE_TRACE_START='ledger::handle_request*'  # one trace per request

wait_for_pid() {  # wait_for_pid FILE: the ledger writes it once it listens
  for _ in $(seq 1 600); do [ -s "$1" ] && return 0; sleep 0.1; done
  echo "flight_soak: the ledger did not start (no $1)" >&2
  return 1
}

echo "== training run (30 s) and its context model"
"$sonde" run --out "$work/train" -- "$ledger" --port $port --pid-file "$work/train.pid" \
  2>"$work/train.err" &
run_pid=$!
wait_for_pid "$work/train.pid"
"$sonde" load --target 127.0.0.1:$port --profile $profile --users 6 --duration 30 \
  --out "$work/train-requests.csv" >/dev/null 2>"$work/train-load.err"
kill -TERM "$(cat "$work/train.pid")"
wait $run_pid || true
"$sonde" context "$work/train" --save-model "$work/model.json" >"$work/context.txt"
echo "model: $work/model.json ($(wc -c <"$work/model.json") bytes)"

echo "== flight run: $minutes min, ledger flags: ${*:-none}"
SONDE_FLIGHT=on SONDE_FLIGHT_CONTEXT_MODEL="$PWD/$work/model.json" SONDE_SUMMARY=true \
  "$sonde" run --out "$work/flight" -- "$ledger" --port $port --pid-file "$work/flight.pid" "$@" \
  2>"$work/flight.err" &
run_pid=$!
wait_for_pid "$work/flight.pid"
pid=$(cat "$work/flight.pid")
"$sonde" load --target 127.0.0.1:$port --profile $profile --users 6 --duration $((minutes * 60)) \
  --out "$work/flight-requests.csv" >/dev/null 2>"$work/flight-load.err" &
load_pid=$!
echo "seconds,rss_kb" >"$work/rss.csv"
start=$SECONDS
while kill -0 $load_pid 2>/dev/null; do
  elapsed=$((SECONDS - start))
  echo "$elapsed,$(awk '/^VmRSS:/{print $2}' /proc/$pid/status)" >>"$work/rss.csv"
  if [ $elapsed -gt 0 ] && [ $((elapsed % 600)) -lt 30 ]; then
    "$sonde" snapshot "$pid" --dir "$work/flight" >>"$work/snapshots.txt" 2>&1 || true
  fi
  sleep 30
done
wait $load_pid || true
kill -TERM "$pid"
wait $run_pid || true

echo "== resident memory of the ledger (kB), every 30 s"
awk -F, 'NR == 2 {first = $2} NR > 1 {n++; if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2; last = $2}
  END {printf "samples %d, first %d, min %d, max %d, last %d\n", n, first, min, max, last}' "$work/rss.csv"
echo "== snapshots"
for f in "$work"/flight/*.snapshot-*.sonde; do
  [ -e "$f" ] || { echo "(none)"; break; }
  echo "$(basename "$f") $(wc -c <"$f") bytes: $("$sonde" summary "$f" 2>/dev/null | sed -n 's/^Snapshot:  //p')"
done
echo "== libsonde's exit summary"
grep '^sonde: ' "$work/flight.err" || true
echo "== requests: $(($(wc -l <"$work/flight-requests.csv") - 1))"
