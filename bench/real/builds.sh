# Sourced by bench/real/run.sh, in its shell (not run on its own): installs
# the packages, finds or builds sonde, fetches the Debian source packages
# and builds each program's variants (plain and instrumented) in
# build/real, each build cached under a key of its sources and flags. It
# uses run.sh's settings (ROOT, WORK, SUDO, PROGRAMS, INSTR, SONDE,
# INSTALL) and helpers (say, die, want) and leaves BIN (the builds'
# folder) and the programs' binaries for the runs.
# shellcheck shell=bash
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
