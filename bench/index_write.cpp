// Throughput of the collector's embedded store alone: how fast IndexWriter
// takes reconstructed traces into DIR/index.sqlite, and whether it slows
// down as the file grows (secondary indexes on random keys do, once they no
// longer fit the page cache).
//
//   bench_index_write OUT_DIR [TRACES=2000000] [EXECUTIONS_PER_TRACE=3] [OPERATIONS=40]
//
// Traces are synthetic but shaped like the collector's input: a chain of
// calls per trace, operation names drawn from OPERATIONS signatures, trace
// ids of 16 interleaved processes, durations spread over three orders of
// magnitude. Prints traces/s and executions/s per tenth of the run, then the
// whole run's figures and the index file's size.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/index_writer.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr,
                 "usage: bench_index_write OUT_DIR [TRACES=2000000] [EXECUTIONS_PER_TRACE=3] "
                 "[OPERATIONS=40]\n");
    return 2;
  }
  const std::string out = argv[1];
  const long traces = argc > 2 ? std::atol(argv[2]) : 2'000'000;
  const long per_trace = argc > 3 ? std::atol(argv[3]) : 3;
  const long operations = argc > 4 ? std::atol(argv[4]) : 40;
  if (traces < 10 || per_trace < 1 || per_trace > 10'000 || operations < 1) {
    std::fprintf(stderr,
                 "bench_index_write: TRACES >= 10, EXECUTIONS_PER_TRACE 1..10000, "
                 "OPERATIONS >= 1\n");
    return 2;
  }
  std::filesystem::remove_all(out);
  sonde::store::IndexWriter index;
  if (std::string e = index.open(out); !e.empty()) {
    std::fprintf(stderr, "bench_index_write: %s\n", e.c_str());
    return 1;
  }
  std::vector<std::string> names;
  for (long i = 0; i < operations; ++i) {
    names.push_back("public void org.example.shop.Service" + std::to_string(i % 7) + ".operation" +
                    std::to_string(i) + "(java.lang.String)");
  }
  const std::string host = "node-1";
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<size_t> pick(0, names.size() - 1);
  std::lognormal_distribution<double> duration(9.0, 1.5);  // median ~8 µs
  sonde::analysis::Trace trace;
  trace.host = host;
  trace.executions.resize(static_cast<size_t>(per_trace));
  int64_t now = 1'700'000'000'000'000'000;
  const long tenth = traces / 10;
  auto start = Clock::now(), slice_start = start;
  std::printf("%10s %12s %14s\n", "traces", "traces/s", "executions/s");
  for (long t = 0; t < traces; ++t) {
    const int64_t process = t % 16;
    trace.trace_id = (process << 40) + t / 16;
    trace.parent_trace_id = trace.trace_id;
    trace.thread_id = process;
    const auto total = static_cast<int64_t>(duration(rng)) + per_trace * 100;
    for (long i = 0; i < per_trace; ++i) {
      sonde::analysis::Execution& e = trace.executions[static_cast<size_t>(i)];
      e.operation = names[pick(rng)];
      e.component = "org.example.shop.Service";
      e.host = host;
      e.eoi = static_cast<int32_t>(i);
      e.ess = static_cast<int32_t>(i);
      e.tin = now + i * 50;
      e.tout = now + total - i * 50;
    }
    now += 1000;
    index.add(trace, 1 + process);
    if (!index.error().empty()) {
      std::fprintf(stderr, "bench_index_write: %s\n", index.error().c_str());
      return 1;
    }
    if ((t + 1) % tenth == 0) {
      const double s = seconds_since(slice_start);
      std::printf("%10ld %12.0f %14.0f\n", t + 1, static_cast<double>(tenth) / s,
                  static_cast<double>(tenth * per_trace) / s);
      std::fflush(stdout);
      slice_start = Clock::now();
    }
  }
  if (std::string e = index.finish(); !e.empty()) {
    std::fprintf(stderr, "bench_index_write: %s\n", e.c_str());
    return 1;
  }
  const double s = seconds_since(start);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(std::filesystem::path(out) / "index.sqlite", ec);
  std::printf("total: %ld traces in %.2f s: %.0f traces/s, %.0f executions/s; index %.1f MiB\n",
              traces, s, static_cast<double>(traces) / s,
              static_cast<double>(traces * per_trace) / s,
              static_cast<double>(ec ? 0 : bytes) / (1024.0 * 1024.0));
  return 0;
}
