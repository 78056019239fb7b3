#!/usr/bin/env bash
# The ICSE'13 story on the demo shop (docs/diagnose/walkthrough.md):
# diagnose, fix one finding, diagnose again, until nothing is found; the
# shop's maximum throughput is measured before each diagnosis.
#
#   bash examples/shop/walkthrough.sh [--quick] [--out DIR]
#        [--problems "one-lane-bridge stifle expensive-query db-lock"]
#        [--users N] [--seconds S] [--repeat R] [--sonde PATH] [--shop PATH]
#
# A "fix" switches off the shop flag behind a finding (what the engineer
# would change in the code). Max throughput: R runs of `sonde load` with N
# users and no think time against the unmonitored shop; the median and the
# range are reported. Writes DIR/walkthrough.md and one diagnosis per step
# (DIR/step-K/report.html). Exit status: 0 done, 1 a step failed, 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$here/../.."
sonde="$root/build/release/src/cli/sonde"
shop="$root/build/release/examples/shop"
out=walkthrough
quick=()
problems="one-lane-bridge stifle expensive-query db-lock"
users=24
seconds=5
repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --out) out="$2"; shift ;;
    --problems) problems="$2"; shift ;;
    --users) users="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --repeat) repeat="$2"; shift ;;
    --sonde) sonde="$2"; shift ;;
    --shop) shop="$2"; shift ;;
    *) echo "walkthrough: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
for tool in "$sonde" "$shop"; do
  [ -x "$tool" ] || { echo "walkthrough: $tool is not built (cmake --build build/release)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "walkthrough: needs jq (bash scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The demo's requests (profile.json) without think time: users keep the
# shop saturated.
jq '.think_time_ms = 0 | del(.think_time_spread_ms)' "$here/profile.json" \
  > "$out/max-throughput-profile.json"

# The shop flag an engineer's fix removes for a finding, most specific
# first: a root cause before the symptom above it.
fix_for() {
  case "$1" in
    dispensable_synchronization|one_lane_bridge) echo one-lane-bridge blurred-sync ;;
    the_stifle) echo stifle stifle-similar ;;
    expensive_database_call) echo expensive-query ;;
    database_olb|database_congestion) echo db-lock expensive-query many-queries ;;
    the_ramp) echo ramp ;;
    application_hiccups) echo hiccups rising-hiccups blurred-hiccups ;;
    the_blob) echo blob blurred-blob ;;
    empty_semi_trucks) echo empty-semi-trucks cascading-loop ;;
    excessive_messaging) echo excessive-messaging blob blurred-blob empty-semi-trucks cascading-loop ;;
    traffic_jam) echo cpu-heavy moderate-cpu ;;
    continuously_violated_requirements) echo slow-external varying-external cpu-heavy moderate-cpu ;;
  esac
}
fix_order="dispensable_synchronization the_stifle expensive_database_call database_olb
  database_congestion one_lane_bridge the_blob empty_semi_trucks excessive_messaging the_ramp
  application_hiccups traffic_jam continuously_violated_requirements"

# Prints "median min max" requests/s of `repeat` load runs against the shop with flags $1.
max_throughput() {
  local log="$2" port="" rates=() args=()
  for flag in $1; do args+=("--$flag"); done
  "$shop" --port 0 "${args[@]}" > "$log" 2>&1 &
  shop_pid=$!  # global: the EXIT trap runs after this function has returned
  # Whatever happens below (a failed load run ends this subshell under
  # set -e), the shop does not outlive it.
  trap 'kill -INT "${shop_pid:-}" 2>/dev/null; wait "${shop_pid:-}" 2>/dev/null' EXIT
  for _ in $(seq 100); do
    port=$(sed -n 's/^shop: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$log")
    [ -n "$port" ] && break
    kill -0 "$shop_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "walkthrough: the shop did not start; see $log" >&2
    return 1
  fi
  for _ in $(seq "$repeat"); do
    local line
    line=$("$sonde" load --target "127.0.0.1:$port" --profile "$out/max-throughput-profile.json" \
      --users "$users" --duration "$seconds" --ramp-up 1 --out "${log%.log}-requests.csv" 2>&1 |
      grep ' requests in ' || true)
    if [ -z "$line" ]; then
      echo "walkthrough: sonde load against the shop failed; see $log" >&2
      return 1
    fi
    echo "  $line" >&2
    rates+=("$(echo "$line" | sed -n 's/.*(\([0-9.]*\)\/s).*/\1/p')")
  done
  printf '%s\n' "${rates[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[1], v[NR]}'
}

table="$out/walkthrough.md"
{
  echo "| Step | Problems switched on | Findings (detected nodes) | Fix | Max throughput [req/s] median (range) | vs. step 0 |"
  echo "|---|---|---|---|---|---|"
} > "$table"
step=0
base=""
while :; do
  echo "== step $step: shop ${problems:+--${problems// / --}}" >&2
  if ! read -r median low high < <(max_throughput "$problems" "$out/step-$step-shop.log") ||
    [ -z "$median" ]; then
    echo "walkthrough: no throughput measured in step $step" >&2
    exit 1
  fi
  [ -n "$base" ] || base=$median
  status=0
  # shellcheck disable=SC2086
  "$sonde" demo "${quick[@]}" --problems ${problems:-none} --out "$out/step-$step" \
    > "$out/step-$step.log" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    echo "walkthrough: the diagnosis of step $step failed (exit $status); see $out/step-$step.log" >&2
    exit 1
  fi
  detected=$(jq -r '[.root | .. | objects | select(has("id") and has("status") and .status == "detected") | .id] | join(" ")' \
    "$out/step-$step/report.json")
  fix=""
  for node in $fix_order; do
    [[ " $detected " == *" $node "* ]] || continue
    for flag in $(fix_for "$node"); do
      if [[ " $problems " == *" $flag "* ]]; then fix=$flag; break 2; fi
    done
  done
  ratio=$(awk -v a="$median" -v b="$base" 'BEGIN {printf "%.1f×", a / b}')
  echo "| $step | ${problems:-none} | ${detected:-none} | ${fix:-–} | $median ($low–$high) | $ratio |" >> "$table"
  echo "   found: ${detected:-nothing}; max throughput $median req/s ($low–$high); fix: ${fix:-none}" >&2
  [ -n "$fix" ] || break
  problems=$(echo " $problems " | sed "s/ $fix / /" | xargs)
  step=$((step + 1))
done
if [ -n "$detected" ]; then
  echo "walkthrough: still detected, with no switch left to fix it: $detected" >&2
fi
echo >&2
cat "$table"
