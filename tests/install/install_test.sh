#!/usr/bin/env bash
# Installs sonde into a scratch prefix and uses only the installed files, as a
# user would:
#   1. cmake --install puts the CLI, libsonde, libsonde-preload, headers,
#      CMake package and pkg-config file where GNUInstallDirs says;
#   2. an out-of-tree C project builds against it with find_package(sonde)
#      and, separately, with pkg-config and plain cc;
#   3. both consumers run with SONDE_OUT set, write a log, and the installed
#      `sonde summary` lists their operation "consumer_work";
#   4. the installed `sonde run` preloads the installed libsonde and
#      libsonde-preload (not the build tree's) into an
#      uninstrumented-at-link-time program.
# Parameters come from tests/install/CMakeLists.txt as IT_* variables. Work
# files stay in IT_WORK_DIR for inspection after a failure.
set -euo pipefail

for var in IT_BUILD_DIR IT_WORK_DIR IT_CONSUMER_SOURCE IT_AUTOINST IT_BINDIR IT_LIBDIR \
  IT_INCLUDEDIR IT_CMAKE IT_GENERATOR IT_CC; do
  [[ -n ${!var:-} ]] || { echo "install test: $var is not set (run it through ctest)" >&2; exit 2; }
done

# Configuration the developer may have exported must not leak into the runs.
while read -r var; do unset "$var"; done < <(compgen -e | grep '^SONDE_' || true)

work=$IT_WORK_DIR
prefix=$work/prefix
sonde=$prefix/$IT_BINDIR/sonde
libdir=$prefix/$IT_LIBDIR

fail() {
  echo "install test FAILED: $*" >&2
  exit 1
}
step() { echo "== $*"; }
# Runs a command with its output in $work/<name>.log; on failure shows the log.
logged() {
  local name=$1
  shift
  if ! "$@" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log" >&2
    fail "$name: '$*' failed (output above, also in $work/$name.log)"
  fi
}

rm -rf "$work"
mkdir -p "$work"

step "install into $prefix"
logged install "$IT_CMAKE" --install "$IT_BUILD_DIR" --prefix "$prefix"
for file in "$sonde" "$libdir/libsonde.so" "$libdir/libsonde-preload.so" \
  "$prefix/$IT_INCLUDEDIR/sonde/sonde.h" \
  "$prefix/$IT_INCLUDEDIR/sonde/sonde.hpp" "$libdir/cmake/sonde/sondeConfig.cmake" \
  "$libdir/pkgconfig/sonde.pc"; do
  [[ -e $file ]] || fail "cmake --install did not install $file"
done

step "build the consumer with find_package(sonde)"
logged consumer-configure "$IT_CMAKE" -S "$IT_CONSUMER_SOURCE" -B "$work/consumer-cmake" \
  -G "$IT_GENERATOR" -DCMAKE_C_COMPILER="$IT_CC" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
found_dir=$(sed -n 's/^sonde_DIR:PATH=//p' "$work/consumer-cmake/CMakeCache.txt")
[[ $(realpath "$found_dir") == "$(realpath "$libdir/cmake/sonde")" ]] ||
  fail "find_package(sonde) found $found_dir, not the installed package in $libdir/cmake/sonde"
logged consumer-build "$IT_CMAKE" --build "$work/consumer-cmake"

step "build the consumer with pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
pc_prefix=$(pkg-config --variable=prefix sonde) || fail "pkg-config cannot find sonde in $PKG_CONFIG_PATH"
[[ $(realpath -m "$pc_prefix") == "$(realpath "$prefix")" ]] ||
  fail "sonde.pc says prefix=$pc_prefix but it was installed in $prefix: sonde.pc must be relocatable (derive the prefix from \${pcfiledir}) for cmake --install --prefix"
pc_flags=$(pkg-config --cflags --libs sonde) || fail "pkg-config --cflags --libs sonde failed"
# shellcheck disable=SC2086 # the flags are meant to be split into words
logged consumer-pkgconfig "$IT_CC" -o "$work/consumer_pc" "$IT_CONSUMER_SOURCE/main.c" $pc_flags

# Runs a consumer under monitoring and checks its log with the installed CLI.
check_consumer() {
  local binary=$1 name
  name=$(basename "$binary")
  local out=$work/logs-$name
  step "run $name"
  local resolved
  resolved=$(LD_LIBRARY_PATH=$libdir ldd "$binary" | awk '$1 ~ /^libsonde\.so/ { print $3 }')
  [[ $(realpath "$resolved") == "$(realpath "$libdir")"/* ]] ||
    fail "$name loads libsonde from '$resolved', not from $libdir"
  LD_LIBRARY_PATH=$libdir SONDE_OUT=$out logged "run-$name" "$binary"
  local logs=("$out/$name"-*.sonde)
  [[ -f ${logs[0]} ]] || fail "$name wrote no log $out/$name-<pid>.sonde; stderr: $(cat "$work/run-$name.log")"
  logged "summary-$name" "$sonde" summary "${logs[0]}"
  grep -q consumer_work "$work/summary-$name.log" ||
    fail "'sonde summary ${logs[0]}' does not list consumer_work: $(cat "$work/summary-$name.log")"
}
check_consumer "$work/consumer-cmake/consumer"
check_consumer "$work/consumer_pc"

step "installed sonde run on $(basename "$IT_AUTOINST")"
run_out=$work/logs-run
logged sonde-run "$sonde" run --out "$run_out" -- "$IT_AUTOINST"
name=$(basename "$IT_AUTOINST")
run_logs=("$run_out/$name"-*.sonde)
[[ -f ${run_logs[0]} ]] || fail "sonde run wrote no $run_out/$name-<pid>.sonde: $(cat "$work/sonde-run.log")"
grep -q "log written to ${run_logs[0]}" "$work/sonde-run.log" ||
  fail "sonde run did not report ${run_logs[0]}: $(cat "$work/sonde-run.log")"
logged summary-autoinst "$sonde" summary "${run_logs[0]}"
grep -q count_down "$work/summary-autoinst.log" ||
  fail "the summary of ${run_logs[0]} lacks count_down: $(cat "$work/summary-autoinst.log")"

# The program's own memory map shows which libsonde was preloaded.
step "installed sonde run preloads the installed libsonde"
"$sonde" run --out "$work/logs-maps" -- cat /proc/self/maps >"$work/maps.txt" 2>"$work/maps.err" ||
  fail "sonde run -- cat /proc/self/maps failed: $(cat "$work/maps.err")"
grep -q " $(realpath "$libdir")/libsonde\.so" "$work/maps.txt" ||
  fail "the installed sonde run did not preload $libdir/libsonde.so; libsonde mappings: $(grep libsonde "$work/maps.txt" || echo none)"
grep -q " $(realpath "$libdir")/libsonde-preload\.so" "$work/maps.txt" ||
  fail "the installed sonde run did not preload $libdir/libsonde-preload.so; libsonde mappings: $(grep libsonde "$work/maps.txt" || echo none)"

# The installed preload library alone finds the installed libsonde ($ORIGIN).
step "installed libsonde-preload finds the installed libsonde"
LD_PRELOAD=$libdir/libsonde-preload.so SONDE_ENABLED=false cat /proc/self/maps >"$work/maps-preload.txt" ||
  fail "LD_PRELOAD=$libdir/libsonde-preload.so cat failed"
grep -q " $(realpath "$libdir")/libsonde\.so" "$work/maps-preload.txt" ||
  fail "libsonde-preload did not load $libdir/libsonde.so: $(grep libsonde "$work/maps-preload.txt" || echo none)"

echo "install test passed"
