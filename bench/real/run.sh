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

# --- packages -------------------------------------------------------------
# Debian packages only: the build dependencies of the three programs (as far
# as these builds need them) and the tracers measured side by side.
PACKAGES=(dpkg-dev ca-certificates build-essential cmake make pkg-config tcl python3
          libsnappy-dev libgtest-dev libgmock-dev libjemalloc-dev
          redis-tools procps iproute2 util-linux
          uftrace lttng-tools liblttng-ust-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ $INSTALL = 1 ] || die "missing Debian packages: ${missing[*]} (run without --no-install, or apt-get install them)"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q >"$SCRATCH/apt-update.txt" 2>&1 ||
    { cat "$SCRATCH/apt-update.txt" >&2; die "apt-get update failed (no network to the Debian archive?)"; }
  "${SUDO[@]}" apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" \
    >"$SCRATCH/apt-install.txt" 2>&1 ||
    { tail -20 "$SCRATCH/apt-install.txt" >&2; die "apt-get install ${missing[*]} failed"; }
fi
PY=/usr/bin/python3

# --- sonde ----------------------------------------------------------------
if [ -z "$SONDE" ]; then
  if [ -x "$ROOT/build/release/src/cli/sonde" ]; then
    SONDE="$ROOT/build/release/src/cli/sonde"
  elif [ -x "$WORK/sonde-build/src/cli/sonde" ]; then
    SONDE="$WORK/sonde-build/src/cli/sonde"
  else
    say "no sonde build found: building it in build/real/sonde-build (needs bash scripts/install-deps.sh)"
    cmake -S "$ROOT" -B "$WORK/sonde-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$SCRATCH/sonde-cmake.txt" 2>&1 ||
      { tail -20 "$SCRATCH/sonde-cmake.txt" >&2; die "configuring sonde failed (run bash scripts/install-deps.sh first)"; }
    cmake --build "$WORK/sonde-build" --target sonde_cli -j"$(nproc)" >"$SCRATCH/sonde-build.txt" 2>&1 ||
      { tail -30 "$SCRATCH/sonde-build.txt" >&2; die "building sonde failed"; }
    SONDE="$WORK/sonde-build/src/cli/sonde"
  fi
fi
[ -x "$SONDE" ] || die "sonde binary not found or not executable: $SONDE"
SONDE="$(cd "$(dirname "$SONDE")" && pwd)/$(basename "$SONDE")"
HAVE_CULL=0
if "$SONDE" run --help 2>/dev/null | grep -q -- --cull; then HAVE_CULL=1; fi

# --- sources --------------------------------------------------------------
# deb-src lines for this run only: a private apt configuration under
# build/real/apt (its own sources list and package lists), so the system's
# /etc/apt is never touched and nothing needs restoring.
SRC="$WORK/src"
APT="$WORK/apt"
CODENAME="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[ "$CODENAME" = bookworm ] || say "warning: this is '$CODENAME', not Debian 12 bookworm; fetching bookworm's sources anyway"
MIRROR="${REAL_BENCH_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${REAL_BENCH_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list" -o "Dir::Etc::SourceParts=$APT/sources.list.d"
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "APT::Sandbox::User=root")
src_dir() {  # the unpacked source tree of a source package, if any
  find "$SRC" -maxdepth 1 -type d -name "$1-[0-9]*" 2>/dev/null | sort | tail -1
}
need_src=()
for pkg in leveldb sqlite3 redis; do
  case $pkg in sqlite3) want sqlite || continue ;; *) want $pkg || continue ;; esac
  [ -n "$(src_dir $pkg)" ] || need_src+=("$pkg")
done
if [ ${#need_src[@]} -gt 0 ]; then
  say "fetching Debian source packages: ${need_src[*]}"
  mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/sources.list.d" "$SRC"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  {
    echo "deb-src [signed-by=$keyring] $MIRROR bookworm main"
    echo "deb-src [signed-by=$keyring] $MIRROR bookworm-updates main"
    echo "deb-src [signed-by=$keyring] $SECURITY_MIRROR bookworm-security main"
  } >"$APT/sources.list"
  apt-get "${apt_opts[@]}" update >"$SCRATCH/apt-src-update.txt" 2>&1 &&
    ! grep -qE '^(W|E): Failed to fetch' "$SCRATCH/apt-src-update.txt" ||
    { tail -20 "$SCRATCH/apt-src-update.txt" >&2; die "cannot read the Debian source index from $MIRROR (no network to the Debian archive?)"; }
  (cd "$SRC" && apt-get "${apt_opts[@]}" source "${need_src[@]}") >"$SCRATCH/apt-source.txt" 2>&1 ||
    { tail -20 "$SCRATCH/apt-source.txt" >&2; die "apt-get source ${need_src[*]} failed"; }
  for pkg in "${need_src[@]}"; do
    [ -n "$(src_dir "$pkg")" ] || die "apt-get source $pkg did not unpack a source tree in $SRC"
  done
fi

# --- builds ---------------------------------------------------------------
# Debian's default build flags (dpkg-buildflags: -g -O2 -fstack-protector-strong
# -D_FORTIFY_SOURCE=2 -Wl,-z,relro, ...), the same for every variant; the
# instrumented variant only adds -finstrument-functions.
BIN="$WORK/bin"
mkdir -p "$BIN"
D_CFLAGS="$(cd / && dpkg-buildflags --get CFLAGS)"
D_CXXFLAGS="$(cd / && dpkg-buildflags --get CXXFLAGS)"
D_CPPFLAGS="$(cd / && dpkg-buildflags --get CPPFLAGS)"
D_LDFLAGS="$(cd / && dpkg-buildflags --get LDFLAGS)"
# The instrumented variant is named after its flags when they are not the
# default, so that switching --instr-flags back and forth rebuilds nothing.
IV=instr
[ "$INSTR" = "-finstrument-functions" ] || IV="instr-$(printf '%s' "$INSTR" | md5sum | cut -c1-8)"
VARIANTS=(plain "$IV")
vflags() { [ "$1" = plain ] || echo "$INSTR"; }

# build_cached NAME VARIANT KEY CMD...: runs CMD unless the stamp says the
# same KEY (sources + flags) was built before.
build_cached() {
  local name=$1 variant=$2 key=$3; shift 3
  local stamp="$BIN/$name-$variant.stamp" log="$BIN/$name-$variant.build.txt"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then return 0; fi
  say "building $name ($variant) — log in ${log#$ROOT/}"
  if ! "$@" >"$log" 2>&1; then
    tail -25 "$log" >&2
    die "building $name ($variant) failed; full log: $log"
  fi
  echo "$key" >"$stamp"
}

build_leveldb() {  # variant
  local v=$1 s b x; s="$(src_dir leveldb)"; b="$BIN/leveldb-$v"; x="$(vflags "$v")"
  rm -rf "$b" && mkdir -p "$b"
  cmake -S "$s" -B "$b" -DCMAKE_BUILD_TYPE=None -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=ON \
    -DCMAKE_C_FLAGS="$D_CPPFLAGS $D_CFLAGS -DNDEBUG $x" -DCMAKE_CXX_FLAGS="$D_CPPFLAGS $D_CXXFLAGS -DNDEBUG $x" \
    -DCMAKE_EXE_LINKER_FLAGS="$D_LDFLAGS" &&
    cmake --build "$b" --target db_bench -j"$(nproc)" &&
    test -x "$b/db_bench"
}

build_redis() {  # variant; redis builds in its tree, so one copy per variant
  local v=$1 s b x; s="$(src_dir redis)"; b="$BIN/redis-$v"; x="$(vflags "$v")"
  rm -rf "$b" && cp -a "$s" "$b" &&
    (cd "$b" && CFLAGS="$D_CFLAGS $x" CPPFLAGS="$D_CPPFLAGS" LDFLAGS="$D_LDFLAGS -Wl,-no-as-needed -ldl -latomic" \
      make -j"$(nproc)" V=1 USE_SYSTEM_JEMALLOC=yes USE_JEMALLOC=yes) &&
    test -x "$b/src/redis-server" && test -x "$b/src/redis-benchmark" && test -x "$b/src/redis-cli"
}

# Debian's sqlite3 build defines (debian/rules), on the amalgamation.
SQLITE_DEFS="-fno-strict-aliasing -DSQLITE_SECURE_DELETE -DSQLITE_ENABLE_COLUMN_METADATA \
-DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS3_PARENTHESIS -DSQLITE_ENABLE_RTREE=1 -DSQLITE_SOUNDEX=1 \
-DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_OMIT_LOOKASIDE=1 -DSQLITE_ENABLE_DBSTAT_VTAB \
-DSQLITE_ENABLE_UPDATE_DELETE_LIMIT=1 -DSQLITE_ENABLE_LOAD_EXTENSION -DSQLITE_ENABLE_JSON1 \
-DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_FTS3_TOKENIZER=1 -DSQLITE_USE_URI=1 \
-DSQLITE_MAX_SCHEMA_RETRY=25 -DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_STMTVTAB \
-DSQLITE_MAX_VARIABLE_NUMBER=250000"

build_sqlite_amalgamation() {
  local s b; s="$(src_dir sqlite3)"; b="$BIN/sqlite-amalgamation"
  rm -rf "$b" && mkdir -p "$b" &&
    (cd "$b" && "$s/configure" --disable-tcl >/dev/null && make sqlite3.c) && test -f "$b/sqlite3.c"
}

build_sqlite() {  # variant
  local v=$1 s b x; s="$(src_dir sqlite3)"; b="$BIN/sqlite-$v"; x="$(vflags "$v")"
  local st="$s/test/speedtest1.c"
  [ -f "$st" ] || st="$s/tool/speedtest1.c"
  rm -rf "$b" && mkdir -p "$b" &&
    gcc $D_CPPFLAGS $D_CFLAGS $SQLITE_DEFS $x -I"$BIN/sqlite-amalgamation" -o "$b/speedtest1" \
      "$st" "$BIN/sqlite-amalgamation/sqlite3.c" $D_LDFLAGS -lpthread -ldl -lm &&
    test -x "$b/speedtest1"
}

flags_key() { echo "$1|$D_CPPFLAGS|$D_CFLAGS|$D_CXXFLAGS|$D_LDFLAGS|$(vflags "$2")|$(gcc -dumpfullversion)|v1"; }
if want leveldb; then
  for v in "${VARIANTS[@]}"; do build_cached leveldb $v "$(flags_key "$(src_dir leveldb)" $v)" build_leveldb $v; done
fi
if want redis; then
  for v in "${VARIANTS[@]}"; do build_cached redis $v "$(flags_key "$(src_dir redis)" $v)" build_redis $v; done
fi
if want sqlite; then
  build_cached sqlite amalgamation "$(src_dir sqlite3)|v1" build_sqlite_amalgamation
  for v in "${VARIANTS[@]}"; do build_cached sqlite $v "$(flags_key "$(src_dir sqlite3)" $v)" build_sqlite $v; done
fi
say "builds ready in ${BIN#$ROOT/}"
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

# --- one run ----------------------------------------------------------------
# WRAP: the command prefix of a configuration; BINV: which build it runs.
set_wrap() {  # config trace-dir
  local c=$1 t=$2
  WRAP=(); BINV=$IV
  case $c in
    plain) BINV=plain ;;
    noop) ;;
    sonde-null) WRAP=("$SONDE" run --writer null --out "$t" --) ;;
    sonde) WRAP=("$SONDE" run --out "$t" --) ;;
    # A first run: what earlier runs culled is neither used nor kept,
    # except by the profiling run (round 0), which fills its program's
    # cache for sonde-cull-again.
    sonde-cull)
      if [ "$ROUND_OF" = 0 ] && [ $HAVE_CULL_CACHE = 1 ]; then
        WRAP=(env "SONDE_CULL_CACHE=$CACHES/$PROFILE_OF" "$SONDE" run --cull --out "$t" --)
      elif [ $HAVE_CULL_CACHE = 1 ]; then
        WRAP=("$SONDE" run --cull --no-cull-cache --out "$t" --)
      else
        WRAP=("$SONDE" run --cull --out "$t" --)
      fi ;;
    # The next --cull run as a user makes it (docs/cull.md, "Across runs"):
    # it starts with what the profiling run culled. Each run gets a fresh
    # copy, so that the rounds do not learn from one another.
    sonde-cull-again)
      rm -rf "$SCRATCH/cull-cache" && cp -r "$CACHES/$PROFILE_OF" "$SCRATCH/cull-cache"
      WRAP=(env "SONDE_CULL_CACHE=$SCRATCH/cull-cache" "$SONDE" run --cull --out "$t" --) ;;
    # The documented second run (docs/cull.md): the report a --cull run
    # wrote, as the patterns file, excludes its functions from the first call.
    sonde-profile) WRAP=("$SONDE" run --set "patterns_file=$PROFILES/$PROFILE_OF.txt" --out "$t" --) ;;
    uftrace) WRAP=(uftrace record --no-libcall -d "$t/uftrace.data") ;;
    lttng) WRAP=(env "LD_PRELOAD=$LTTNG_LIB") ;;
  esac
}

LTTNG_N=0
lttng_begin() {  # trace-dir -> LTTNG_SESSION
  LTTNG_N=$((LTTNG_N + 1))
  LTTNG_SESSION="real-bench-$$-$LTTNG_N"
  lttng create "$LTTNG_SESSION" --output="$1" >"$1.lttng.txt" 2>&1 || return 1
  LTTNG_SESSIONS+=("$LTTNG_SESSION")
  lttng enable-event --userspace --all --session="$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 &&
    lttng start "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1
}
lttng_end() {  # trace-dir -> LTTNG_DISCARDED: the events LTTng says it discarded
  lttng stop "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 || true
  lttng destroy "$LTTNG_SESSION" >>"$1.lttng.txt" 2>&1 || true
  LTTNG_SESSIONS=("${LTTNG_SESSIONS[@]/$LTTNG_SESSION}")
  # lttng 2.13: "Warning: N events were discarded, ..." / "N packets were lost".
  LTTNG_DISCARDED="$({ grep -oE '[0-9]+ events? (were|was|has been|have been) discarded' "$1.lttng.txt" || true; } |
    awk '{s += $1} END {print s + 0}')"
  LTTNG_LOST_PACKETS="$({ grep -oE '[0-9]+ packets? (were|was|has been|have been) lost' "$1.lttng.txt" || true; } |
    awk '{s += $1} END {print s + 0}')"
}

# run_fg OUT ERR CMD...: one program run under a time limit, in the
# background so that the trap can stop it.
run_fg() {
  local o=$1 e=$2 rc=0; shift 2
  timeout -k 10 "$RUN_TIMEOUT" "$@" >"$o" 2>"$e" &
  CUR_PID=$!
  wait "$CUR_PID" || rc=$?
  CUR_PID=""
  return $rc
}

free_port() {
  local p=$((20000 + RANDOM % 20000))
  while ss -Htln "sport = :$p" 2>/dev/null | grep -q .; do p=$((p + 1)); done
  echo $p
}

# The state of a process group's threads (for a server that hangs): state,
# CPU time, wait channel and current system call of each.
proc_snapshot() {  # leader-pid file
  {
    echo "== $(date -u +%H:%M:%S) process group $1"
    local q tsk
    for q in $(pgrep -g "$1" 2>/dev/null); do
      echo "-- pid $q: $(tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null | cut -c1-200)"
      for tsk in /proc/"$q"/task/*; do
        printf '%s %s state=%s utime=%s stime=%s wchan=%s syscall=%s\n' "${tsk##*/}" "$(cat "$tsk/comm" 2>/dev/null)" \
          "$(awk '{print $3}' "$tsk/stat" 2>/dev/null)" "$(awk '{print $14}' "$tsk/stat" 2>/dev/null)" \
          "$(awk '{print $15}' "$tsk/stat" 2>/dev/null)" "$(cat "$tsk/wchan" 2>/dev/null)" \
          "$(cut -d' ' -f1 "$tsk/syscall" 2>/dev/null)"
      done
    done
  } >>"$2" 2>&1 || true
}

wait_pid() {  # pid seconds: 0 when it ended in time
  local i
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

# The sonde exit summary: "sonde: N events written, M lost, log: PATH".
sonde_exit_line() {  # round program config stderr-file
  local line
  line="$(tr '\r' '\n' <"$4" | grep -E '^sonde: [0-9]+ events written, [0-9]+ lost' | tail -1 || true)"
  if [ -z "$line" ]; then
    fail "$1" "$2" "$3" "no 'sonde: N events written, M lost' line at exit (log not closed?)"
    return
  fi
  rec "$1" "$2" "$3" events_written "$(sed -E 's/^sonde: ([0-9]+) events written.*/\1/' <<<"$line")"
  rec "$1" "$2" "$3" events_lost "$(sed -E 's/^sonde: [0-9]+ events written, ([0-9]+) lost.*/\1/' <<<"$line")"
  # "sonde: writer thread: X ms CPU, Y ns per event", "sonde: writer health:
  # probes waited Z ms in all for free buffers; ..." (when printed).
  local v
  v="$(tr '\r' '\n' <"$4" | sed -nE 's/^sonde: writer thread: .* ([0-9.]+) ns per event.*/\1/p' | tail -1)"
  [ -z "$v" ] || rec "$1" "$2" "$3" writer_ns_per_event "$v"
  v="$(tr '\r' '\n' <"$4" | sed -nE 's/^sonde: writer health: probes waited ([0-9.]+) ms.*/\1/p' | tail -1)"
  [ -z "$v" ] || rec "$1" "$2" "$3" probes_waited_ms "$v"
  return 0
}

run_one() {  # round program config
  local r=$1 p=$2 c=$3 d="$SCRATCH/run/$2-$3-$1" rc=0 t0 t1
  local t="$d/trace" data="$d/data"
  rm -rf "$d" && mkdir -p "$data" "$t"
  PROFILE_OF=$p
  ROUND_OF=$r
  set_wrap "$c" "$t"
  if [ "$c" = lttng ]; then
    lttng_begin "$t" || { fail "$r" "$p" "$c" "lttng create/enable-event/start failed: $(tail -1 "$t.lttng.txt")"; return; }
  fi
  t0=$(date +%s.%N)
  case $p in
    leveldb)
      run_fg "$d/out.txt" "$d/err.txt" "${WRAP[@]}" "$BIN/leveldb-$BINV/db_bench" --benchmarks=fillseq,readrandom \
        --num="$LEVELDB_NUM" --db="$data/db" || rc=$?
      ;;
    sqlite)
      run_fg "$d/out.txt" "$d/err.txt" "${WRAP[@]}" "$BIN/sqlite-$BINV/speedtest1" --size "$SQLITE_SIZE" \
        "$data/speedtest1.db" || rc=$?
      ;;
    redis)
      local port pid ready=0
      port=$(free_port)
      setsid "${WRAP[@]}" "$BIN/redis-$BINV/src/redis-server" --port "$port" --bind 127.0.0.1 --save "" \
        --appendonly no --daemonize no --dir "$data" --logfile "" >"$d/server.txt" 2>&1 &
      pid=$!
      SERVER_PIDS+=("$pid")
      for _ in $(seq 300); do
        if timeout 5 "$BIN/redis-plain/src/redis-cli" -p "$port" ping 2>/dev/null | grep -q PONG; then ready=1; break; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if [ $ready = 1 ]; then
        t0=$(date +%s.%N)
        run_fg "$d/out.txt" "$d/err.txt" "$BIN/redis-plain/src/redis-benchmark" -h 127.0.0.1 -p "$port" \
          -t set,get -n "$REDIS_N" -c 20 -q || rc=$?
        # Pipelined (-P 16): 16 commands per round trip, so the server's
        # own CPU, not loopback round trips, bounds the rate, and what the
        # instrumentation costs redis shows (without it, sonde and the no-op
        # hooks differ by less than the run-to-run noise).
        [ $rc != 0 ] || run_fg "$d/out-pipelined.txt" "$d/err-pipelined.txt" \
          "$BIN/redis-plain/src/redis-benchmark" -h 127.0.0.1 -p "$port" \
          -t set,get -n "$REDIS_N" -c 20 -P 16 -q || rc=$?
        cat "$d/err-pipelined.txt" >>"$d/err.txt" 2>/dev/null || true
        [ $rc = 0 ] || proc_snapshot "$pid" "$d/server-state.txt"
        timeout 30 "$BIN/redis-plain/src/redis-cli" -p "$port" shutdown nosave >/dev/null 2>&1 || true
        if ! wait_pid "$pid" 60; then
          proc_snapshot "$pid" "$d/server-state.txt"
          fail "$r" "$p" "$c" "redis-server did not stop within 90 s of SHUTDOWN; killed (its threads' states in ${OUT#$ROOT/}/failed/$p-$c-$r/server-state.txt)"
          kill -TERM -- "-$pid" 2>/dev/null; wait_pid "$pid" 10 || kill -KILL -- "-$pid" 2>/dev/null
        fi
        local src=0; wait "$pid" 2>/dev/null || src=$?
        [ $src = 0 ] || fail "$r" "$p" "$c" "redis-server exited with status $src (see $(tail -1 "$d/server.txt"))"
      else
        kill -TERM -- "-$pid" 2>/dev/null; wait_pid "$pid" 10 || kill -KILL -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
        fail "$r" "$p" "$c" "redis-server did not start on port $port: $(tail -2 "$d/server.txt" | tr '\n' ' ')"
        rc=1
      fi
      SERVER_PIDS=("${SERVER_PIDS[@]/$pid}")
      cat "$d/server.txt" >>"$d/err.txt"
      ;;
  esac
  t1=$(date +%s.%N)
  rec "$r" "$p" "$c" wall_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')"
  if [ "$c" = lttng ]; then lttng_end "$t"; rec "$r" "$p" "$c" lttng_discarded "$LTTNG_DISCARDED"
    rec "$r" "$p" "$c" lttng_lost_packets "$LTTNG_LOST_PACKETS"; fi
  # Throughput figures, from the programs' own reports.
  local out; out="$(tr '\r' '\n' <"$d/out.txt"; tr '\r' '\n' <"$d/err.txt")"
  local v got=0
  case $p in
    leveldb)
      for b in fillseq readrandom; do
        v="$(sed -nE "s/^$b +: +([0-9.]+) micros\/op.*/\1/p" <<<"$out" | head -1)"
        [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:$b" "$(awk -v u="$v" 'BEGIN {printf "%.1f", 1e6 / u}')"; got=1; }
      done ;;
    sqlite)
      v="$(sed -nE 's/^ +TOTAL\.+ +([0-9.]+)s$/\1/p' <<<"$out" | head -1)"
      [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:total" "$v"; got=1; } ;;
    redis)
      for b in SET GET; do
        v="$(sed -nE "s/^$b: ([0-9.]+) requests per second.*/\1/p" <<<"$out" | head -1)"
        [ -n "$v" ] && { rec "$r" "$p" "$c" "metric:$b" "$v"; got=1; }
        v="$(tr '\r' '\n' <"$d/out-pipelined.txt" 2>/dev/null |
          sed -nE "s/^$b: ([0-9.]+) requests per second.*/\1/p" | head -1)"
        [ -n "$v" ] && rec "$r" "$p" "$c" "metric:${b}_P16" "$v"
      done ;;
  esac
  local kept="$OUT/failed/$p-$c-$r" nerr=${#ERRORS[@]} nwarn=${#WARNINGS[@]}
  if [ $rc != 0 ]; then
    local msg
    msg="$(tr '\r' '\n' <"$d/err.txt" | { grep -v -e '^\.\.\. finished' -e '^$' || true; } | tail -2 | tr '\n' ' ')"
    if [ $rc = 124 ]; then
      fail "$r" "$p" "$c" "timed out after ${RUN_TIMEOUT}s (output in ${kept#$ROOT/})"
    elif [ $got = 1 ] && { [ "$c" = uftrace ] || [ "$c" = lttng ]; }; then
      # A peer tracer failing after the workload reported its figures: kept,
      # but said (uftrace 0.13 sometimes fails at exit while threads run).
      warn "$r" "$p" "$c" "exited with status $rc after the workload finished: $msg(output in ${kept#$ROOT/})"
    else
      fail "$r" "$p" "$c" "exited with status $rc: $msg(output in ${kept#$ROOT/})"
    fi
  elif [ $got = 0 ]; then
    fail "$r" "$p" "$c" "no throughput figure in its output (output in ${kept#$ROOT/})"
  fi
  # Log sizes and the monitors' own counts (not after a run that produced nothing).
  if [ $rc != 0 ] && [ $got = 0 ]; then
    mkdir -p "$kept" && cp "$d"/*.txt "$kept"/ 2>/dev/null || true
    rm -rf "$d"
    return
  fi
  case $c in
    sonde|sonde-cull|sonde-cull-again|sonde-profile|sonde-null) sonde_exit_line "$r" "$p" "$c" "$d/err.txt" ;;
  esac
  case $c in
    sonde|sonde-cull|sonde-cull-again|sonde-profile|lttng) [ -d "$t" ] && rec "$r" "$p" "$c" log_bytes "$(du -sb "$t" | cut -f1)" ;;
    uftrace)
      if [ -d "$t/uftrace.data" ]; then
        rec "$r" "$p" "$c" log_bytes "$(du -sb "$t/uftrace.data" | cut -f1)"
        # uftrace's records are 16 bytes each (no arguments recorded).
        rec "$r" "$p" "$c" uftrace_records "$(cat "$t"/uftrace.data/*.dat 2>/dev/null | wc -c | awk '{print int($1 / 16)}')"
        grep -qiE 'lost' "$d/err.txt" && rec "$r" "$p" "$c" uftrace_lost "$(grep -iE 'lost' "$d/err.txt" | head -1)"
      fi ;;
  esac
  if [ "$r" = 1 ] && { [ "$c" = sonde ] || [ "$c" = sonde-cull ] || [ "$c" = sonde-cull-again ] || [ "$c" = sonde-profile ]; }; then
    check_log "$p" "$c" "$t"
  fi
  # Round 0 is the profiling run of sonde-profile: its report is kept.
  if [ "$r" = 0 ]; then
    local report; report="$(ls "$t"/*.cull.txt 2>/dev/null | head -1 || true)"
    if [ -n "$report" ]; then cp "$report" "$PROFILES/$p.txt"; else fail 0 "$p" "$c" "the profiling run wrote no cull report"; fi
  fi
  if [ ${#ERRORS[@]} != "$nerr" ] || [ ${#WARNINGS[@]} != "$nwarn" ]; then
    mkdir -p "$kept" && cp "$d"/*.txt "$kept"/ 2>/dev/null || true
    cp "$t"/*.txt "$kept"/ 2>/dev/null || true
  fi
  rm -rf "$d"
}

# The first round's sonde logs: read back completely (sonde check), traces
# reconstructed (sonde traces, sonde summary), names resolved.
CHECK_MAX_RECORDS="${REAL_BENCH_CHECK_MAX_RECORDS:-60000000}"
check_log() {  # program config trace-dir
  local p=$1 c=$2 t=$3 log k="$CHECKS/$1-$2"
  log="$(ls "$t"/*.sonde 2>/dev/null | head -1 || true)"
  if [ -z "$log" ]; then fail 1 "$p" "$c" "no .sonde log in $t"; return; fi
  local n; n="$(ls "$t"/*.sonde | wc -l)"
  [ "$n" = 1 ] || rec 1 "$p" "$c" check_note "$n logs (forked children?); checking $(basename "$log")"
  say "  checking $p / ${LABEL[$c]} log ($(du -h "$log" | cut -f1))"
  local rc=0
  "$SONDE" check "$log" >"$k.check.txt" 2>&1 || rc=$?
  rec 1 "$p" "$c" check_rc "$rc"
  local recs; recs="$(sed -nE 's/^records: ([0-9]+)$/\1/p' "$k.check.txt")"
  if [ -n "$recs" ] && [ "$recs" -gt "$CHECK_MAX_RECORDS" ]; then
    rec 1 "$p" "$c" check_note "trace reconstruction skipped: $recs records > REAL_BENCH_CHECK_MAX_RECORDS=$CHECK_MAX_RECORDS (whole-thread traces are held in memory)"
    return
  fi
  # sonde traces reconstructs the traces as sonde summary does; to keep the
  # run short it runs on the native writer's full-run logs only.
  if [ $QUICK = 0 ] && [ "$c" = sonde ]; then
    rc=0
    /usr/bin/time -f 'time_check %e s %M KiB' -o "$k.traces.time" "$SONDE" traces --summary --json "$log" \
      >"$k.traces.json" 2>"$k.traces.err" || rc=$?
    rec 1 "$p" "$c" traces_rc "$rc"
    rec 1 "$p" "$c" traces_cost "$(sed -n 's/^time_check //p' "$k.traces.time")"
  fi
  rc=0
  /usr/bin/time -f 'time_check %e s %M KiB' -o "$k.summary.time" "$SONDE" summary --format json "$log" \
    >"$k.summary.json" 2>"$k.summary.err" || rc=$?
  rec 1 "$p" "$c" summary_rc "$rc"
  rec 1 "$p" "$c" summary_cost "$(sed -n 's/^time_check //p' "$k.summary.time")"
  if [ $KEEP_LOGS = 1 ]; then mkdir -p "$OUT/logs" && cp "$log" "$OUT/logs/$p-$c.sonde"; fi
}

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
