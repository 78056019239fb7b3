#!/usr/bin/env bash
# Runs the scenario suite (scenarios/README.md): one `sonde demo` diagnosis
# per case of cases.txt, then prints the thesis-style accuracy table.
#   bash scenarios/run.sh [--quick] [--only tc01,tc17] [--out DIR] [--sonde PATH]
# Exit status: 0 every case scored and right, 4 some case wrong or unscored,
# 1 a case could not run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sonde="$here/../build/release/src/cli/sonde"
out=scenario-results
quick=()
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --only) only=",$2,"; shift ;;
    --out) out="$2"; shift ;;
    --sonde) sonde="$2"; shift ;;
    *) echo "scenarios/run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$sonde" ] || { echo "scenarios/run.sh: no sonde at $sonde (build it, or --sonde PATH)" >&2; exit 1; }
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
  echo "== $id: shop --${problems[*]} ${options[*]}" >&2
  status=0
  "$sonde" demo "${quick[@]}" "${options[@]}" --problems "${problems[@]}" --out "$out/$id" \
    > "$out/$id.log" 2>&1 || status=$?
  # 0 complete, 3 incomplete (still scored, and listed as incomplete).
  if [ "$status" != 0 ] && [ "$status" != 3 ]; then
    echo "scenarios/run.sh: $id failed (exit $status); see $out/$id.log" >&2
    tail -5 "$out/$id.log" >&2
  fi
done < "$here/cases.txt"
exec "$sonde" diagnose --accuracy "$cases" --out "$out"
