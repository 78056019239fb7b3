#!/bin/bash
# Collector throughput: PROCESSES test_workload processes (2 threads, 50,000
# iterations, depth 3, "throw": 1,200,007 records each) stream at once over
# loopback TCP into one `sonde collect`; prints the collector's totals, the
# time from the first start to the collector's exit, records/s, the
# store's sizes and the collector's CPU time (per million records, from the
# collector's own exit line). Usage (from the repository, after a release build):
#   bash bench/collect_throughput.sh [BUILD_DIR=build/release] [PROCESSES=4] [-- COLLECT_ARGS...]
# e.g. `bash bench/collect_throughput.sh build/release 4 -- --reduce 1s`.
# The writers speak SONDE_TCP_PROTOCOL (default native; kieker for Kieker's
# TCP frames).
set -euo pipefail
build=${1:-build/release}
processes=${2:-4}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
sonde=${SONDE:-$build/src/cli/sonde}  # SONDE=path: another build of sonde, side by side
workload="$build/tests/monitor/programs/test_workload"
for f in "$sonde" "$workload"; do
  [ -x "$f" ] || { echo "collect_throughput: $f missing (build the release tree first)" >&2; exit 2; }
done
out=$(mktemp -d /tmp/sonde-collect-throughput.XXXXXX)
trap 'rm -rf "$out"' EXIT
start=$(date +%s%N)
# GNU time (Debian package `time`, scripts/install-deps.sh --bench) measures
# any build's collector the same way, older ones that do not print their
# own CPU time included.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "collector cpu: %U s user + %S s system, max RSS %M KiB" -o "$out/time")
"${timer[@]}" "$sonde" collect --listen 127.0.0.1:0 --out "$out/store" --connections "$processes" "$@" \
  2> "$out/collect.err" &
collector=$!
for _ in $(seq 100); do grep -q "listening on" "$out/collect.err" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o "listening on [0-9.]*:[0-9]*" "$out/collect.err" | sed 's/.*://')
[ -n "$port" ] || { cat "$out/collect.err" >&2; exit 1; }
for _ in $(seq "$processes"); do
  SONDE_WRITER=tcp SONDE_TCP_PORT="$port" SONDE_TCP_PROTOCOL="${SONDE_TCP_PROTOCOL:-native}" \
    SONDE_SUMMARY=false "$workload" 2 50000 3 throw &
done
wait "$collector"
end=$(date +%s%N)
grep "sonde collect: total" "$out/collect.err"
# The collector's own CPU time (user + system, every thread) per million
# records: the producers share the machine's cores, so wall time alone
# mixes in their cost.
grep "sonde collect: cpu" "$out/collect.err" || true
[ -f "$out/time" ] && cat "$out/time"
echo "protocol ${SONDE_TCP_PROTOCOL:-native}"
received=$(grep -o "total: [0-9]* received" "$out/collect.err" | grep -o "[0-9]*")
ms=$(((end - start) / 1000000))
echo "elapsed ${ms} ms: $((received * 1000 / ms)) records/s; logs $(du -sm "$out/store/log" | cut -f1) MiB, index $(du -sm "$out/store/index.sqlite" | cut -f1) MiB"
