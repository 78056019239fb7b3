#!/usr/bin/env bash
# The planted problems' effect, measured by hand before the first diagnosis
# (README.md, "Measured effect"): the ticket office unmonitored, one fresh
# process per row, `sonde load` with this folder's profile for 4 s after a
# 0.5-s ramp-up, and the affected service's mean and 90th percentile.
# A smoke test that each flag produces its problem, not a benchmark.
#   bash scenarios/tickets/measure-effect.sh [BUILD]     (default build/release)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build/release}
tickets=$build/examples/tickets
sonde=$build/src/cli/sonde
[ -x "$tickets" ] && [ -x "$sonde" ] || { echo "measure-effect.sh: build sonde_cli and tickets in $build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# row FLAG USERS RATE SERVICE...: a line per service, from one run (RATE
# "-": the closed workload; else the open one, requests per second).
row() {
  local flag=$1 users=$2 rate=$3 port args=()
  shift 3
  [ "$rate" != - ] || rate=""
  [ "$flag" = none ] || args+=("--$flag")
  "$tickets" --port 0 "${args[@]}" > "$work/out.txt" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^tickets: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out.txt")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "measure-effect.sh: tickets --$flag did not start" >&2; cat "$work/out.txt" >&2; exit 1; }
  local load=(--target "127.0.0.1:$port" --profile "$here/profile.json" --users "$users" --duration 4
              --ramp-up 0.5 --out "$work/requests.csv")
  [ -z "$rate" ] || load+=(--rate "$rate")
  "$sonde" load "${load[@]}" > /dev/null
  kill -INT "$pid"
  wait "$pid" || true
  python3 - "$work/requests.csv" "$flag" "$users" "$rate" "$@" <<'PY'
import csv, sys
path, flag, users, rate, *services = sys.argv[1:]
rows = list(csv.DictReader(open(path)))
load = f"{users} users" + (f", open {rate}/s" if rate else "")
for service in services:
    ms = sorted((int(r["end_ns"]) - int(r["start_ns"])) / 1e6 for r in rows if r["service"] == service)
    errors = sum(1 for r in rows if r["service"] == service and not r["status"].startswith("2"))
    if not ms:
        sys.exit(f"measure-effect.sh: no {service} requests with --{flag}")
    print(f"| {flag} | `{service}` | {load} | {sum(ms) / len(ms):.2f} / {ms[int(0.9 * (len(ms) - 1))]:.2f} | {len(ms)} ({errors} not 2xx) |")
PY
}

echo "| Flag | Service | Load | mean / P90 ms | requests |"
echo "|---|---|---|---|---|"
all=("GET /events/:id" "GET /events/:id/seats" "POST /orders" "GET /orders/:id" "GET /search" "GET /price")
for users in 1 6 12; do row none "$users" - "${all[@]}"; done
row none 12 960 "GET /events/:id" "GET /price"
row refresh-pauses 12 960 "GET /events/:id" "GET /price"
for users in 1 12; do
  row unpruned-holds "$users" - "GET /events/:id/seats"
  row slow-fraud-check "$users" - "POST /orders"
  row price-simulation "$users" - "GET /price"
  row allocation-lock "$users" - "POST /orders"
  row seat-n-plus-one "$users" - "GET /events/:id/seats"
  row review-scan "$users" - "GET /search"
  row write-coalescing "$users" - "GET /events/:id" "GET /orders/:id"
done
