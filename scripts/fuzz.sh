#!/usr/bin/env bash
# Fuzzes every reader and parser with libFuzzer (clang, ASan + UBSan).
# Usage: bash scripts/fuzz.sh [--seconds N] [--jobs J] [FUZZER...]
#   --seconds N  run each fuzzer for N seconds (default 30; CI uses a few;
#                a long run is e.g. --seconds 3600)
#   FUZZER       only these (fuzz_kieker_dat fuzz_kieker_bin fuzz_kieker_tcp
#                fuzz_native fuzz_openxtrace fuzz_config fuzz_diagnose_inputs);
#                default all
# Seeds come from the test fixtures in tests/data (converted by the release
# build's `sonde` when it exists) and fuzz/regressions/<fuzzer>/, which
# holds every input that once crashed; each is replayed first. A crash
# leaves its input in build/fuzz/crashes/<fuzzer>/ and makes this script
# fail.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

seconds=30
fuzzers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    *) fuzzers+=("$1"); shift ;;
  esac
done
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=(fuzz_kieker_dat fuzz_kieker_bin fuzz_kieker_tcp fuzz_native fuzz_openxtrace fuzz_config fuzz_diagnose_inputs)

build=build/fuzz
echo "== build fuzzers (clang, libFuzzer, ASan + UBSan)"
# -O1 with assertions on: libFuzzer's usual choice, and half the compile
# time of -O2 under the sanitizers.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DSONDE_FUZZ=ON -DSONDE_BUILD_TESTS=OFF -DSONDE_SANITIZE=address,undefined >/dev/null
cmake --build "$build" --target fuzzers

testdata=tests/data  # the fixtures of the tests (tests/data/README.md)
corpus="$build/corpus"
mkdir -p "$corpus"
seed() {  # seed FUZZER NAME < bytes
  mkdir -p "$corpus/$1"
  cat > "$corpus/$1/$2"
}
# Kieker text logs: kieker.map, NUL, the first 8 KiB of a data file.
for dir in "$testdata"/kieker/*/log; do
  name=$(basename "$(dirname "$dir")")
  for dat in "$dir"/*.dat; do
    { cat "$dir/kieker.map"; printf '\0'; head -c 8192 "$dat"; } | seed fuzz_kieker_dat "$name"
  done
done
# Binary and native logs: converted from the small Kieker logs.
sonde=build/release/src/cli/sonde
if [ -x "$sonde" ]; then
  for name in events-2014 events-2017-singleton; do
    out="$build/seed-$name"
    rm -rf "$out" "$out.sonde"
    "$sonde" convert "$testdata/kieker/$name/log" "$out" --to kieker-bin >/dev/null
    { cat "$out/kieker.map"; printf '\0'; cat "$out"/*.bin; } | seed fuzz_kieker_bin "$name"
    "$sonde" convert "$testdata/kieker/$name/log" "$out.sonde" --to native >/dev/null
    seed fuzz_native "$name" < "$out.sonde"
    "$sonde" convert "$testdata/kieker/$name/log" "$out.json" --to openxtrace >/dev/null
    seed fuzz_openxtrace "$name" < "$out.json"
  done
else
  echo "note: $sonde not built; binary/native seeds skipped (run scripts/test.sh --quick first)"
fi
for f in "$testdata"/openxtrace/*.json; do seed fuzz_openxtrace "$(basename "$f")" < "$f"; done
printf 'writer = native\nbuffer_events = 4096\nfull_policy = drop\n\0include *::run*\nexclude *\n' |
  seed fuzz_config basic
# The shop's usage profile and the environment example of docs/diagnose/config.md.
{ cat examples/shop/profile.json; printf '\0'
  sed -n '/^```json$/,/^```$/p' docs/diagnose/config.md | sed -n '2,/^```$/p' | sed '$d'; } |
  seed fuzz_diagnose_inputs shop
mkdir -p "$corpus/fuzz_kieker_tcp"

status=0
for f in "${fuzzers[@]}"; do
  echo "== $f: ${seconds}s"
  crashes="$build/crashes/$f"
  mkdir -p "$crashes"
  regressions=fuzz/regressions/$f
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$build/fuzz/$f" "$regressions"/* >"$build/$f.replay.log" 2>&1 ||
      { echo "FAIL: $f crashes on a regression input (see $build/$f.replay.log)"; status=1; continue; }
  fi
  if ! ASAN_OPTIONS=detect_leaks=1 "$build/fuzz/$f" "$corpus/$f" -max_total_time="$seconds" \
      -max_len=65536 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$crashes/" \
      -print_final_stats=1 >"$build/$f.log" 2>&1; then
    echo "FAIL: $f found a crash; input in $crashes/, log $build/$f.log"
    tail -40 "$build/$f.log"
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/$f.log" | tr '\n' ' '
  echo
done
exit $status
