#!/usr/bin/env bash
# The main job end to end, on embedded defaults (no server needed):
#  1. installs dependencies and builds sonde;
#  2. monitors a program built with -finstrument-functions and NOT linked
#     with sonde (no source changes), via `sonde run`;
#  3. monitors the bookstore example (manual probes, threads, recursion, an
#     exception) into a native log and into a Kieker log;
#  4. analyses the logs: summary tables, a dependency graph and a call tree
#     as SVG pictures.
# Output goes to ./demo-output (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-demo-output}")

bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release
sonde=build/release/src/cli/sonde
examples=build/release/examples

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

echo
echo "== 4. The Kieker log (readable by Kieker's own tools) checked by sonde"
"$sonde" check "$out"/bookstore-kieker/kieker-*

echo
echo "Done. Logs and pictures are in $out:"
ls -1 "$out" "$out"/*.svg
