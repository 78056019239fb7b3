#!/usr/bin/env bash
# Runs the scenario suite (scenarios/README.md): one `sonde demo` diagnosis
# per case of cases.txt, then prints the thesis-style accuracy table.
#   bash scenarios/run.sh [--quick] [--only tc01,tc17] [--out DIR] [--sonde PATH]
#                         [--system shop|ledger|tickets] [--repeat N]
# --repeat N: the whole selection N times on fresh processes, into
# OUT/rep1..OUT/repN, then the mean and the worst accuracy per node over
# the repetitions (`sonde diagnose --accuracy --repetitions`).
# --system ledger: the second system under test (scenarios/ledger/README.md),
# one `sonde diagnose --config` per case of scenarios/ledger/cases.txt; the
# ledger binary is the one next to sonde's build (BUILD/examples/ledger).
# --system tickets: the third (scenarios/tickets/README.md), the same way.
# The shop, too, is the one next to sonde's build (BUILD/examples/shop), so
# a frozen sonde runs the shop built with it.
# Exit status: 0 every case scored and right, 4 some case wrong or unscored,
# 1 a case could not run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sonde="$here/../build/release/src/cli/sonde"
out=scenario-results
quick=()
only=""
system=shop
repeat=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --only) only=",$2,"; shift ;;
    --out) out="$2"; shift ;;
    --sonde) sonde="$2"; shift ;;
    --system) system="$2"; shift ;;
    --repeat) repeat="$2"; shift ;;
    *) echo "scenarios/run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$sonde" ] || { echo "scenarios/run.sh: no sonde at $sonde (build it, or --sonde PATH)" >&2; exit 1; }
if [ "$repeat" != 0 ]; then
  [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "scenarios/run.sh: --repeat needs a positive number" >&2; exit 2; }
  args=(--sonde "$sonde" --system "$system" "${quick[@]}")
  if [ -n "$only" ]; then only_list=${only#,}; args+=(--only "${only_list%,}"); fi
  for k in $(seq 1 "$repeat"); do
    echo "== repetition $k of $repeat" >&2
    status=0
    bash "$0" "${args[@]}" --out "$out/rep$k" || status=$?
    # 4: some label wrong, still scored; anything else: a case could not run.
    [ "$status" = 0 ] || [ "$status" = 4 ] || exit "$status"
  done
  exec "$sonde" diagnose --accuracy "$out/rep1/cases.txt" --out "$out" --repetitions
fi
case "$system" in
  shop) case_file="$here/cases.txt" ;;
  ledger|tickets) case_file="$here/$system/cases.txt" ;;
  *) echo "scenarios/run.sh: --system shop, ledger or tickets, not '$system'" >&2; exit 2 ;;
esac
sut_binary="$(cd "$(dirname "$sonde")/../.." && pwd)/examples/$system"
[ -x "$sut_binary" ] ||
  { echo "scenarios/run.sh: no $system at $sut_binary (cmake --build BUILD --target $system)" >&2; exit 1; }
# A ledger or tickets case's config: scenarios/SYSTEM/config.json with absolute paths,
# the case's flags after {port}, --quick's durations (those of `sonde demo
# --quick`) and the case's options (--database postgresql: a throw-away
# server on the upper half of the CPUs, the ledger on the lower half, as
# `sonde demo` does; --arrival-rate-per-user R: the open workload;
# --messaging redis: a throw-away Redis as the ledger's event bus, sampled
# as its message broker; --requirement-scale F: every threshold_ms times F,
# for a deployment slower than the one the requirements were set on).
system_config() {  # system_config FLAGS OPTIONS > config.json
  local args="" f sed_args=() cpus=() n db_cpus="" database="" messaging="" servers="" scale=1
  for f in $1; do [ "$f" = none ] || args+=", \"--$f\""; done
  set -- $2
  while [ $# -gt 0 ]; do
    case "$1" in
      --arrival-rate-per-user) sed_args+=(-e "s/\"arrival_rate_per_user\": [0-9.]*/\"arrival_rate_per_user\": $2/"); shift ;;
      --database)
        [ "$2" = postgresql ] || { echo "scenarios/run.sh: --database postgresql only" >&2; return 1; }
        database=1; args+=', "--postgres", "{database}"'; shift ;;
      --messaging)
        [ "$2" = redis ] || { echo "scenarios/run.sh: --messaging redis only" >&2; return 1; }
        messaging=1; args+=', "--redis", "{broker}"'; shift ;;
      --requirement-scale)
        [[ "$2" =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v f="$2" 'BEGIN { exit !(f > 0) }' ||
          { echo "scenarios/run.sh: --requirement-scale needs a positive number, not '$2'" >&2; return 1; }
        scale="$2"; shift ;;
      *) echo "scenarios/run.sh: unknown $system case option '$1'" >&2; return 1 ;;
    esac
    shift
  done
  # The servers the run starts, in whichever order the options named them.
  # With PostgreSQL the ledger gets the lower half of the CPUs and the
  # servers the upper half (Redis shares the database's, as `sonde demo`
  # places them).
  if [ -n "$database" ]; then
    for f in $(grep Cpus_allowed_list /proc/self/status | cut -f2 | tr , ' '); do
      if [[ "$f" == *-* ]]; then cpus+=($(seq "${f%-*}" "${f#*-}")); else cpus+=("$f"); fi
    done
    n=${#cpus[@]}
    if [ "$n" -ge 2 ]; then
      db_cpus=$(echo "${cpus[@]:n/2}" | tr ' ' ,)
      sed_args+=(-e "s/\"sut\": {/\"sut\": {\"cpus\": \"$(echo "${cpus[@]:0:n/2}" | tr ' ' ,)\",/")
    fi
    servers+="\"database\": {\"kind\": \"postgresql\", \"start\": true${db_cpus:+, \"cpus\": \"$db_cpus\"}}, "
  fi
  if [ -n "$messaging" ]; then
    servers+="\"broker\": {\"kind\": \"redis\", \"start\": true, \"queues\": \"ledger:queue:*\"${db_cpus:+, \"cpus\": \"$db_cpus\"}}, "
  fi
  [ -z "$servers" ] || sed_args+=(-e "1s/^{\$/{${servers%, },/")
  if [ ${#quick[@]} -gt 0 ]; then
    sed_args+=(-e 's/"max_users": [0-9]*/"max_users": 6/' -e 's/"scaling_steps": [0-9]*/"scaling_steps": 3/'
               -e 's/"ramp_up_s": [0-9.]*/"ramp_up_s": 0.5/' -e 's/"stable_s": [0-9.]*/"stable_s": 3/'
               -e 's/"stability_max_s": [0-9.]*/"stability_max_s": 3/')
  fi
  sed -e "s|\"command\": \[\"[^\"]*\"|\"command\": [\"$sut_binary\"|" -e "s|\"{port}\"|\"{port}\"$args|" \
      -e "s|\"profile\": \"[^\"]*\"|\"profile\": \"$here/$system/profile.json\"|" "${sed_args[@]}" \
      "$here/$system/config.json" | scale_requirements "$scale"
}
# Multiplies every "threshold_ms": N of the config on stdin by $1.
scale_requirements() {
  awk -v scale="$1" '{
    out = ""
    while (match($0, /"threshold_ms": [0-9.]+/)) {
      value = substr($0, RSTART + 16, RLENGTH - 16) * scale
      out = out substr($0, 1, RSTART - 1) "\"threshold_ms\": " value
      $0 = substr($0, RSTART + RLENGTH)
    }
    print out $0
  }'
}
mkdir -p "$out"
cases="$out/cases.txt"
: > "$cases"
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  id=$(echo "$line" | cut -d'|' -f1 | tr -d ' ')
  if [ -n "$only" ] && [[ "$only" != *",$id,"* ]]; then continue; fi
  echo "$line" >> "$cases"
  flags=$(echo "$line" | cut -d'|' -f3)
  read -r -a problems <<< "$flags"
  # The optional 6th field: more `sonde demo` options for this case.
  extra=$(echo "$line" | cut -s -d'|' -f6 | sed 's/^ *- *$//')
  read -r -a options <<< "$extra"
  echo "== $id: $system --${problems[*]} ${options[*]}" >&2
  status=0
  if [ "$system" != shop ]; then
    mkdir -p "$out/$id"
    if system_config "${problems[*]}" "${options[*]}" > "$out/$id/config.json"; then
      "$sonde" diagnose --config "$out/$id/config.json" --out "$out/$id" > "$out/$id.log" 2>&1 || status=$?
    else
      status=1
    fi
  else
    "$sonde" demo "${quick[@]}" --shop "$sut_binary" "${options[@]}" \
      --problems "${problems[@]}" --out "$out/$id" > "$out/$id.log" 2>&1 || status=$?
  fi
  # 0 complete, 3 incomplete (still scored, and listed as incomplete).
  if [ "$status" != 0 ] && [ "$status" != 3 ]; then
    echo "scenarios/run.sh: $id failed (exit $status); see $out/$id.log" >&2
    tail -5 "$out/$id.log" >&2
  fi
done < "$case_file"
exec "$sonde" diagnose --accuracy "$cases" --out "$out"
