#!/usr/bin/env bash
# Interleaved A/B runs of `sonde run --cull` settings on leveldb's db_bench
# and SQLite's speedtest1, the binaries bench/real/run.sh built (run it
# once first). Each round runs the no-op-hook build and every configuration
# once, in a rotating order; the figures are the medians (and ranges) over
# the rounds of each configuration's throughput relative to the same
# round's no-op-hook run, which cancels much of a shared machine's drift.
#
#   bash bench/real/ab.sh [--rounds N] [--out FILE] [NAME='ENV=VALUE ...' ...]
#
# A configuration is a name and the environment it runs `sonde run --cull`
# with, e.g. late='SONDE_CULL_EARLY_PERCENT=0'; "cull" (the defaults) is
# always included. Databases go to /dev/shm (less disk noise).
# Example: bash bench/real/ab.sh --rounds 8 late='SONDE_CULL_EARLY_PERCENT=0'
# A word sonde=PATH in a configuration runs that sonde binary (another
# build, with its own libsonde) instead of this tree's, to pair two builds:
#   bash bench/real/ab.sh --rounds 8 before='sonde=/tmp/old/build/src/cli/sonde'
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
SONDE="$ROOT/build/release/src/cli/sonde"
BIN="$ROOT/build/real/bin"
ROUNDS=8
OUT=""
declare -a NAMES=(noop cull)
declare -A ENVS=([noop]="" [cull]="")
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    *=*) n="${1%%=*}"; NAMES+=("$n"); ENVS[$n]="${1#*=}" ;;
    *) echo "ab.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
DB_BENCH="$BIN/leveldb-instr/db_bench"
SPEEDTEST="$BIN/sqlite-instr/speedtest1"
for f in "$SONDE" "$DB_BENCH" "$SPEEDTEST"; do
  [ -x "$f" ] || { echo "ab.sh: missing $f (build sonde, then run bench/real/run.sh once)" >&2; exit 1; }
done
[ -n "$OUT" ] || OUT="$(mktemp /tmp/sonde-ab.XXXXXX.tsv)"
SCRATCH="$(mktemp -d /dev/shm/sonde-ab.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
printf 'round\tconfig\tfillseq_us_per_op\treadrandom_us_per_op\tspeedtest1_s\n' >"$OUT"
n=${#NAMES[@]}
for ((r = 1; r <= ROUNDS; r++)); do
  for ((i = 0; i < n; i++)); do
    c=${NAMES[$(((i + r) % n))]}
    if [ "$c" = noop ]; then wrap=(); else
      sonde="$SONDE"
      vars=()
      for word in ${ENVS[$c]}; do
        case "$word" in sonde=*) sonde="${word#sonde=}" ;; *) vars+=("$word") ;; esac
      done
      [ -x "$sonde" ] || { echo "ab.sh: $c: no sonde binary at $sonde" >&2; exit 1; }
      wrap=(env "${vars[@]}" "$sonde" run --cull --no-cull-cache --out "$SCRATCH/log" --)
    fi
    rm -rf "$SCRATCH/log" "$SCRATCH/db" "$SCRATCH/st.db"
    lv="$("${wrap[@]}" "$DB_BENCH" --benchmarks=fillseq,readrandom --num=30000 \
      --db="$SCRATCH/db" 2>&1 | tr '\r' '\n')"
    fill="$(awk '/^fillseq/ {print $3}' <<<"$lv")"
    read_="$(awk '/^readrandom/ {print $3}' <<<"$lv")"
    rm -rf "$SCRATCH/log"
    total="$("${wrap[@]}" "$SPEEDTEST" --size 15 "$SCRATCH/st.db" 2>&1 |
      awk '/TOTAL/ {gsub("s", "", $2); print $2}')"
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$c" "${fill:-NA}" "${read_:-NA}" "${total:-NA}" >>"$OUT"
  done
  echo "ab.sh: round $r of $ROUNDS done" >&2
done
python3 - "$OUT" <<'EOF'
import collections, statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
by_round = collections.defaultdict(dict)
for r, c, *v in rows:
    by_round[r][c] = v
ratios = collections.defaultdict(lambda: [[], [], []])
for runs in by_round.values():
    base = runs.get("noop")
    if base is None:
        continue
    for c, v in runs.items():
        for k in range(3):
            try:
                ratios[c][k].append(float(base[k]) / float(v[k]))
            except ValueError:
                pass
print("throughput relative to the no-op hooks, median [range] over %d rounds" % len(by_round))
print("%-12s %-22s %-22s %-22s" % ("config", "fillseq", "readrandom", "speedtest1"))
for c, cols in ratios.items():
    cells = ["%.2f [%.2f-%.2f]" % (statistics.median(x), min(x), max(x)) if x else "-" for x in cols]
    print("%-12s %-22s %-22s %-22s" % (c, *cells))
print("per-run figures:", sys.argv[1])
EOF
