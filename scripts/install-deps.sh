#!/usr/bin/env bash
# Installs every Debian package sonde needs to build, test and run its demo.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  g++ clang clang-format libclang-rt-14-dev llvm
  # The sanitizer builds link with lld (CMakeLists.txt: three times faster).
  lld
  libzstd-dev liblz4-dev zlib1g-dev
  liblzma-dev libbz2-dev
  libdw-dev libelf-dev
  # Culling decodes functions to find exit hook calls compiled as tail jumps.
  libcapstone-dev
  nlohmann-json3-dev libcli11-dev
  libsqlite3-dev sqlite3
  # The database probe's libpq test (tests/monitor/interpose_libpq_test.cpp)
  # runs a throw-away PostgreSQL server.
  libpq-dev postgresql
  # examples/shop (the diagnose demo system under test) serves HTTP with it.
  libcpp-httplib-dev
  # The shop's messages through Redis (--redis), the broker sampler, and the
  # throw-away broker the diagnosis and its tests start (redis-cli comes along).
  redis-server libhiredis-dev
  # The tests. (The micro-benchmarks in bench/ time with their own loops and
  # two clock reads, as MooBench does: Google Benchmark is not used.)
  libgtest-dev libgmock-dev
  graphviz
  # `sonde serve`: HTTP server library; the browser tests drive Debian's Chromium.
  libcpp-httplib-dev chromium
  # The compressed Kieker log tests make their inputs with the real tools.
  gzip xz-utils bzip2 zip unzip
  # The collector's ClickHouse store: HTTP client, and the server the tests start.
  libcpp-httplib-dev clickhouse-server
  # scenarios/reevaluate.py: stored scenario runs judged again.
  python3
  # The Perfetto export tests decode sonde's .pftrace with protoc against
  # docs/formats/perfetto_subset.proto (sonde itself does not use it).
  protobuf-compiler
)

# --bench: the peers `sonde bench` measures side by side (docs/bench.md);
# not needed to build or test sonde.
if [ "${1:-}" = "--bench" ]; then
  packages+=(uftrace lttng-tools liblttng-ust-dev
    time)  # GNU time: bench/collect_throughput.sh's CPU time of any collector build
fi
# Node.js runs the browser tests (playwright-core); a Node.js that brings its
# own npm (e.g. NodeSource's) is fine, Debian's needs the npm package.
if ! command -v npm >/dev/null 2>&1; then packages+=(nodejs npm); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The browser tests' npm packages (playwright-core), pinned by package-lock.json.
ui_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/ui"
if [ -f "$ui_dir/package-lock.json" ] && [ ! -d "$ui_dir/node_modules/playwright-core" ]; then
  (cd "$ui_dir" && npm ci --no-audit --no-fund)
fi
