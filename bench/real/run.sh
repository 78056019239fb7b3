#!/usr/bin/env bash
# Real-program overhead benchmark (issue 23, item 9): leveldb's db_bench,
# sqlite's speedtest1 and redis-server, built from their Debian 12 source
# packages with Debian's compiler flags, uninstrumented and with
# -finstrument-functions, then run side by side under sonde, uftrace and
# LTTng-UST's cyg-profile-fast helper. See bench/real/README.md.
#
#   bash bench/real/run.sh [--quick] [--out DIR] [--rounds N]
#                          [--programs leveldb,sqlite,redis] [--sonde PATH]
#                          [--instr-flags FLAGS] [--keep-logs] [--no-install]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$ROOT/build/real"          # sources, builds, apt state, scratch (never committed)
CMDLINE="bash bench/real/run.sh $*"

QUICK=0
OUT=""
ROUNDS=""
PROGRAMS="leveldb,sqlite,redis"
SONDE=""
KEEP_LOGS=0
INSTALL=1
INSTR="-finstrument-functions"

usage() {
  sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<'EOF'

Options:
  --quick              small sizes and 3 rounds (about 3 minutes after the builds)
  --out DIR            results directory (default build/real/results)
  --rounds N           rounds per configuration (default 5, --quick 3)
  --programs LIST      comma list of leveldb, sqlite, redis (default all)
  --sonde PATH         the sonde binary (default build/release/src/cli/sonde;
                       built into build/real/sonde-build when neither exists)
  --instr-flags FLAGS  the instrumented variant's extra flags (default -finstrument-functions;
                       e.g. "-finstrument-functions -finstrument-functions-exclude-file-list=/usr/include")
  --keep-logs          keep the first round's trace logs in DIR/logs
  --no-install         do not apt-get install missing packages (fail instead)
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --out) OUT="${2:?--out needs a directory}"; shift ;;
    --out=*) OUT="${1#--out=}" ;;
    --rounds) ROUNDS="${2:?--rounds needs a number}"; shift ;;
    --rounds=*) ROUNDS="${1#--rounds=}" ;;
    --programs) PROGRAMS="${2:?--programs needs a list}"; shift ;;
    --programs=*) PROGRAMS="${1#--programs=}" ;;
    --sonde) SONDE="${2:?--sonde needs a path}"; shift ;;
    --sonde=*) SONDE="${1#--sonde=}" ;;
    --instr-flags) INSTR="${2:?--instr-flags needs flags}"; shift ;;
    --instr-flags=*) INSTR="${1#--instr-flags=}" ;;
    --keep-logs) KEEP_LOGS=1 ;;
    --no-install) INSTALL=0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
[ -n "$ROUNDS" ] || ROUNDS=$([ $QUICK = 1 ] && echo 3 || echo 5)
case "$ROUNDS" in ''|*[!0-9]*|0) echo "run.sh: --rounds must be a positive number" >&2; exit 2 ;; esac
[ -n "$OUT" ] || OUT="$WORK/results"
for p in ${PROGRAMS//,/ }; do
  case "$p" in leveldb|sqlite|redis) ;; *) echo "run.sh: unknown program '$p' (leveldb, sqlite, redis)" >&2; exit 2 ;; esac
done
want() { [[ ",$PROGRAMS," == *",$1,"* ]]; }

# Workload sizes: a full run about 15 minutes on the 2-core development VM,
# --quick about 3 (the builds, done once, not counted).
# With -finstrument-functions on everything these programs make many calls:
# about 1,900 per leveldb operation, 4.6 M per speedtest1 size unit, 220 per
# redis request; the full sizes keep a sonde log near 30 M events, whose
# trace reconstruction in the checks needs about 3 GB of memory.
if [ $QUICK = 1 ]; then
  LEVELDB_NUM=2000; SQLITE_SIZE=1; REDIS_N=10000
else
  LEVELDB_NUM=8000; SQLITE_SIZE=3; REDIS_N=40000
fi
# Larger sizes amortize the start-up (symbolizing each function at its
# first call) over seconds of work: REAL_BENCH_LEVELDB_NUM,
# REAL_BENCH_SQLITE_SIZE, REAL_BENCH_REDIS_N override them.
LEVELDB_NUM=${REAL_BENCH_LEVELDB_NUM:-$LEVELDB_NUM}
SQLITE_SIZE=${REAL_BENCH_SQLITE_SIZE:-$SQLITE_SIZE}
REDIS_N=${REAL_BENCH_REDIS_N:-$REDIS_N}
for v in REAL_BENCH_REDIS_N REAL_BENCH_SQLITE_SIZE REAL_BENCH_LEVELDB_NUM; do
  [ -z "${!v:-}" ] || CMDLINE="$v=${!v} $CMDLINE"
done
RUN_TIMEOUT=$([ $QUICK = 1 ] && echo 60 || echo 300)   # seconds, one program run

say() { printf 'real-bench: %s\n' "$*" >&2; }
die() { printf 'real-bench: error: %s\n' "$*" >&2; exit 1; }

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "run as root or install sudo (apt-get and lttng-sessiond need root)"
  SUDO=(sudo)
fi

# --- cleanup --------------------------------------------------------------
# Everything temporary lives in $SCRATCH (under build/real), and TMPDIR points
# there so that no tool leaves files in /tmp.
mkdir -p "$WORK"
SCRATCH="$(mktemp -d "$WORK/scratch.XXXXXX")"
export TMPDIR="$SCRATCH/tmp"
mkdir -p "$TMPDIR"
SERVER_PIDS=()        # redis-server wrappers still running
LTTNG_SESSIONS=()     # lttng sessions still existing
SESSIOND_PID=""       # the lttng-sessiond this script started
CUR_PID=""            # the program run in progress (under timeout)
cleanup() {
  local rc=$?
  set +e
  for pid in "${SERVER_PIDS[@]}"; do  # each the leader of its own process group (setsid)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL -- "-$pid" 2>/dev/null
    fi
  done
  [ -z "$CUR_PID" ] || { kill -TERM "$CUR_PID" 2>/dev/null; wait "$CUR_PID" 2>/dev/null; }
  for s in "${LTTNG_SESSIONS[@]}"; do [ -z "$s" ] || lttng destroy "$s" >/dev/null 2>&1; done
  if [ -n "$SESSIOND_PID" ]; then
    kill -TERM "$SESSIOND_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$SESSIOND_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SESSIOND_PID" 2>/dev/null
    wait "$SESSIOND_PID" 2>/dev/null
    [ -z "${OUT_READY:-}" ] || cp "$SCRATCH/lttng-sessiond.txt" "$OUT/" 2>/dev/null
  fi
  # LTTng-UST's wait files, when this run's session daemon and programs made them.
  if [ -n "${SHM_BEFORE+x}" ]; then
    for f in $(ls /dev/shm 2>/dev/null | grep '^lttng-ust-wait' || true); do
      grep -qx "$f" <<<"$SHM_BEFORE" || rm -f "/dev/shm/$f"
    done
  fi
  rm -rf "$SCRATCH"
  exit $rc
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM HUP
unset LD_PRELOAD
for v in $(compgen -e | grep '^SONDE_' || true); do unset "$v"; done

# --- packages, sonde, sources, builds: bench/real/builds.sh ---------------
# shellcheck source=bench/real/builds.sh
source "$ROOT/bench/real/builds.sh"
if [ "${REAL_BENCH_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi

# --- configurations -------------------------------------------------------
find_library() {
  local d
  for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  return 1
}
LTTNG_LIB="$(find_library liblttng-ust-cyg-profile-fast.so || true)"
CONFIGS=(plain noop sonde-null sonde sonde-cull sonde-cull-again sonde-profile uftrace lttng)
declare -A LABEL=(
  [plain]="uninstrumented"
  [noop]="no-op hooks ($INSTR, glibc's empty hooks)"
  [sonde-null]="sonde run --writer null"
  [sonde]="sonde run (native writer, defaults)"
  [sonde-cull]="sonde run --cull (a first run: --no-cull-cache)"
  [sonde-cull-again]="sonde run --cull again (starting with what the profiling run culled: its cache)"
  [sonde-profile]="sonde run, culled from the start (patterns_file: a --cull run's report)"
  [uftrace]="uftrace record --no-libcall"
  [lttng]="LTTng-UST cyg-profile-fast"
)
declare -A SKIP=()
[ $HAVE_CULL = 1 ] || SKIP[sonde-cull]="not available: this sonde has no 'run --cull'"
[ $HAVE_CULL = 1 ] || SKIP[sonde-profile]="not available: this sonde has no 'run --cull'"
if [ $HAVE_CULL = 1 ] && ! "$SONDE" run --help 2>/dev/null | grep -q -- --no-cull-cache; then
  HAVE_CULL_CACHE=0
  SKIP[sonde-cull-again]="not available: this sonde's --cull remembers nothing between runs"
else
  HAVE_CULL_CACHE=$HAVE_CULL
fi
[ $HAVE_CULL = 1 ] || SKIP[sonde-cull-again]="not available: this sonde has no 'run --cull'"
command -v uftrace >/dev/null 2>&1 || SKIP[uftrace]="uftrace not installed (Debian package uftrace)"
if ! command -v lttng >/dev/null 2>&1 || ! command -v lttng-sessiond >/dev/null 2>&1; then
  SKIP[lttng]="lttng not installed (Debian package lttng-tools)"
elif [ -z "$LTTNG_LIB" ]; then
  SKIP[lttng]="liblttng-ust-cyg-profile-fast.so not found (Debian package liblttng-ust-dev)"
fi

# LTTng needs a session daemon: reuse a running one, else start one for this
# run (stopped by the trap). The UST wait files it makes in /dev/shm are
# removed afterwards when this run created them.
SHM_BEFORE="$(ls /dev/shm 2>/dev/null | grep '^lttng-ust-wait' || true)"
start_sessiond() {
  pgrep -x lttng-sessiond >/dev/null 2>&1 && return 0
  lttng-sessiond --no-kernel >"$SCRATCH/lttng-sessiond.txt" 2>&1 &
  SESSIOND_PID=$!
  for _ in $(seq 50); do
    lttng list >/dev/null 2>&1 && return 0
    kill -0 "$SESSIOND_PID" 2>/dev/null || break
    sleep 0.2
  done
  SKIP[lttng]="lttng-sessiond did not start: $(tail -1 "$SCRATCH/lttng-sessiond.txt" 2>/dev/null)"
  say "warning: ${SKIP[lttng]}"
}
if [ -z "${SKIP[lttng]:-}" ]; then start_sessiond; fi

# --- output files -----------------------------------------------------------
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
RAW="$OUT/runs.tsv"           # round program config key value, one measurement or fact a line
CHECKS="$OUT/checks"         # the sonde log checks (round 1)
rm -rf "$CHECKS" "$OUT/logs" "$OUT/failed" "$OUT/lttng-sessiond.txt" && mkdir -p "$CHECKS"
OUT_READY=1
printf 'round\tprogram\tconfig\tkey\tvalue\n' >"$RAW"
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }
ERRORS=()
WARNINGS=()
fail() {  # round program config message
  ERRORS+=("round $1, $2, ${LABEL[$3]}: $4")
  say "error: round $1, $2, ${LABEL[$3]}: $4"
  rec "$1" "$2" "$3" error "$4"
}
warn() {  # round program config message
  WARNINGS+=("round $1, $2, ${LABEL[$3]}: $4")
  say "warning: round $1, $2, ${LABEL[$3]}: $4"
  rec "$1" "$2" "$3" warning "$4"
}

# Machine and versions.
{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
  echo "cores=$(nproc)"
  echo "kernel=$(uname -r)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "gcc=$(gcc -dumpfullversion)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "sonde=$SONDE"
  echo "sonde_commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- src include 2>/dev/null || echo ' (modified)')"
  echo "uftrace=$(uftrace --version 2>/dev/null | head -1)"
  echo "lttng=$(lttng --version 2>/dev/null | head -1)"
  for pkg in leveldb sqlite3 redis; do
    d="$(src_dir $pkg)"; [ -n "$d" ] || continue
    echo "src_$pkg=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$d/debian/changelog")"
  done
  echo "cflags=$D_CPPFLAGS $D_CFLAGS"
  echo "ldflags=$D_LDFLAGS"
  echo "instr=$INSTR"
  echo "command=$CMDLINE"
  echo "quick=$QUICK"
  echo "rounds=$ROUNDS"
  echo "leveldb_num=$LEVELDB_NUM"
  echo "sqlite_size=$SQLITE_SIZE"
  echo "redis_n=$REDIS_N"
  for c in "${CONFIGS[@]}"; do echo "label_$c=${LABEL[$c]}"; [ -z "${SKIP[$c]:-}" ] || echo "skip_$c=${SKIP[$c]}"; done
} >"$OUT/machine.txt"

# --- one run: bench/real/one_run.sh ------------------------------------------
# shellcheck source=bench/real/one_run.sh
source "$ROOT/bench/real/one_run.sh"

# --- the rounds -------------------------------------------------------------
ACTIVE=()
for c in "${CONFIGS[@]}"; do [ -n "${SKIP[$c]:-}" ] || ACTIVE+=("$c"); done
PROGS=()
for p in leveldb sqlite redis; do want $p && PROGS+=("$p"); done
say "measuring ${PROGS[*]} x ${#ACTIVE[@]} configurations x $ROUNDS rounds (leveldb --num=$LEVELDB_NUM, sqlite --size $SQLITE_SIZE, redis -n $REDIS_N)"
for c in "${CONFIGS[@]}"; do [ -z "${SKIP[$c]:-}" ] || say "  ${LABEL[$c]}: ${SKIP[$c]}"; done
T_START=$(date +%s)
# sonde-profile's patterns: one --cull run per program before the rounds
# (round 0; report.py leaves it out of the figures).
PROFILES="$SCRATCH/profiles"
CACHES="$SCRATCH/cull-caches"
mkdir -p "$PROFILES" "$CACHES"
if [ -z "${SKIP[sonde-profile]:-}" ] || [ -z "${SKIP[sonde-cull-again]:-}" ]; then
  for p in "${PROGS[@]}"; do
    say "profiling run: $p, ${LABEL[sonde-cull]}"
    run_one 0 "$p" sonde-cull
  done
fi
for ((r = 1; r <= ROUNDS; r++)); do
  for p in "${PROGS[@]}"; do
    # Interleaved: every round runs each configuration once, starting at a
    # different one each round.
    n=${#ACTIVE[@]}
    for ((i = 0; i < n; i++)); do
      c=${ACTIVE[$(((i + r - 1) % n))]}
      say "round $r/$ROUNDS: $p, ${LABEL[$c]}"
      run_one "$r" "$p" "$c"
    done
  done
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo "measure_s=$(($(date +%s) - T_START))" >>"$OUT/machine.txt"
rm -rf "$SCRATCH/run"

# --- report -----------------------------------------------------------------
"$PY" "$ROOT/bench/real/report.py" "$OUT" || die "writing the report failed"
cat "$OUT/results.md"
if [ ${#ERRORS[@]} -gt 0 ]; then
  say "${#ERRORS[@]} error(s):"
  for e in "${ERRORS[@]}"; do say "  $e"; done
  exit 1
fi
if [ ${#WARNINGS[@]} -gt 0 ]; then
  say "${#WARNINGS[@]} warning(s):"
  for e in "${WARNINGS[@]}"; do say "  $e"; done
fi
