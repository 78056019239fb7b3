#!/usr/bin/env bash
# The main job end to end, on embedded defaults (no server needed). After
# installing dependencies and building what it runs, it (steps as printed):
#  1. monitors a program built with -finstrument-functions and NOT linked
#     with sonde (no source changes), via `sonde run`;
#  2. monitors the bookstore example (manual probes, threads, recursion, an
#     exception) into a native log and into a Kieker log;
#  3. draws a dependency graph, call trees and a flame graph as SVG;
#  4. lists the slowest traces, shows one as a call tree, and exports for
#     Perfetto/speedscope (Chrome JSON), OpenTelemetry (OTLP) and OPEN.xtrace;
#  5. checks the Kieker log it wrote;
#  6. runs Kieker's trace-analysis outputs on a real Kieker log (a test
#     fixture in tests/data, so the checkout alone is enough);
#  7. diagnoses the demo shop (`sonde demo --quick`, about a minute).
# Output goes to ./demo-output (or $1). The build directory is build/release,
# or $SONDE_BUILD_DIR (both relative to the repository's root, like $1), so
# the demo can run beside another build without touching it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-demo-output}")
build=${SONDE_BUILD_DIR:-build/release}

bash scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Only what the demo runs: the sonde binary, the two libraries `sonde run`
# preloads, the two example programs and the shop `sonde demo` diagnoses.
# The whole tree (tests, benchmarks: ~230 targets) is scripts/test.sh's job.
# One compile job per core (scripts/test.sh says why).
cmake --build "$build" -j "$(nproc)" --target sonde_cli sonde_monitor sonde_preload \
  example_autoinst example_bookstore shop
sonde=$build/src/cli/sonde
examples=$build/examples

rm -rf "$out"
mkdir -p "$out"

echo
echo "== 1. A program with no sonde code, built with -finstrument-functions"
"$sonde" run --out "$out/autoinst" -- "$examples/example_autoinst" 20 6
"$sonde" summary "$out/autoinst" --top 8

echo
echo "== 2. The bookstore example (manual probes), native log and Kieker log"
"$sonde" run --out "$out/bookstore" -- "$examples/example_bookstore" 4 50 5
"$sonde" run --out "$out/bookstore-kieker" --writer kieker-dat -- "$examples/example_bookstore" 4 50 5
"$sonde" summary "$out/bookstore" --top 10

echo
echo "== 3. Pictures"
"$sonde" graph "$out/bookstore" --kind dependency --out "$out/bookstore-dependencies.svg"
"$sonde" graph "$out/bookstore" --kind calltree --out "$out/bookstore-calltree.svg"
"$sonde" graph "$out/autoinst" --kind calltree --out "$out/autoinst-calltree.svg"
"$sonde" flame "$out/bookstore" --out "$out/bookstore-flame.svg"

echo
echo "== 4. The slowest traces, one of them as a call tree, and exports"
"$sonde" traces "$out/bookstore" --sort duration --limit 5
slowest=$("$sonde" traces "$out/bookstore" --sort duration --limit 1 --csv | sed -n 2p | cut -d, -f1)
"$sonde" traces "$out/bookstore" --show "$slowest"
"$sonde" convert "$out/bookstore" "$out/bookstore.chrome.json" --to chrome
"$sonde" convert "$out/bookstore" "$out/bookstore.otlp.jsonl" --to otlp
"$sonde" convert "$out/bookstore" "$out/bookstore.openxtrace.json" --to openxtrace

echo
echo "== 5. The Kieker log (readable by Kieker's own tools) checked by sonde"
"$sonde" check "$out"/bookstore-kieker/kieker-*

echo
echo "== 6. Kieker's trace-analysis outputs for a real Kieker log"
# Kieker's own example log (tests/data/README.md); Kieker's trace-analysis
# output for it is in tests/data/kieker/bookstore-oer-2010/kieker-trace-analysis-output.
"$sonde" trace-analysis tests/data/kieker/bookstore-oer-2010/log \
  --out "$out/kieker-trace-analysis" --all --svg \
  --select-traces 6488138950668976141 6488138950668976129

echo
echo "== 7. Diagnosis: the demo shop with injected antipatterns, experiments, report"
"$sonde" demo --quick --out "$out/diagnosis"

echo
echo "Done. Logs, pictures and exports are in $out; the diagnosis report is"
echo "$out/diagnosis/report.html"
echo "(open bookstore.chrome.json in https://ui.perfetto.dev, the .svg files in a browser):"
ls -1 "$out" "$out"/*.svg
