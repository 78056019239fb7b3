// One loop of `sonde bench`: runs the MooBench driver (bench/moobench) once
// in a fresh process under one configuration, then reads what it left: the
// per-call durations, the monitor's counters, and the log it wrote, read
// back with sonde's own readers (or the records a local TCP receiver
// counted) so that records written can be checked against records produced.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sonde::cli::bench {

struct Workload {
  uint64_t calls = 0;  // per thread, warm-up included
  int depth = 10;
  uint64_t method_time_ns = 0;
  int threads = 1;
  double warmup = 0.5;  // fraction of each thread's calls discarded
};

// Where a configuration's output goes: nowhere; a sonde log under SONDE_OUT
// that is read back; a local TCP receiver that counts; a `sonde collect`
// collector ({work}/collect) that reconstructs and indexes traces live
// (MooBench's live-analysis R portion); the same collector reducing traces
// (`--reduce`, the D portion); a peer's own trace directory ({work}/peer) of
// which only the size is taken.
enum class Sink { kNone, kLog, kTcp, kCollect, kCollectReduce, kPeerDir };
inline bool is_collector(Sink s) { return s == Sink::kCollect || s == Sink::kCollectReduce; }

struct Config {
  std::string name;    // e.g. "T+I+C+W native"
  std::string binary;  // bench_moobench_plain | _manual | _cyg
  std::vector<std::pair<std::string, std::string>> env;
  std::string preload;  // LD_PRELOAD, or ""
  // "{work}" in these is replaced by the loop's work directory.
  std::vector<std::string> wrapper;  // a command the driver runs under (uftrace record ...)
  std::vector<std::vector<std::string>> before, after;  // commands around the loop (lttng ...)
  Sink sink = Sink::kNone;
  bool sonde = false;       // libsonde is in the process: its counters are expected
  std::string group;        // "sonde" | "floor" | "peer" (for reports)
  std::string skip_reason;  // non-empty: not run, reported as skipped
};

struct LoopResult {
  std::string error;               // "" = ok
  std::vector<float> per_call_ns;  // every timed call's duration / depth
  double mean_ns = 0;              // mean of per_call_ns
  uint64_t timed_calls = 0;        // all threads
  uint64_t elapsed_ns = 0;         // wall time of the timed phase
  uint64_t events_recorded = 0, events_written = 0, events_dropped = 0;
  uint64_t records_read = 0;          // flow records read back (or received over TCP)
  uint64_t bytes = 0;                 // log size on disk, or bytes received over TCP
  uint64_t traces_reconstructed = 0;  // kCollect: valid traces the collector built
  uint64_t traces_invalid = 0;        // kCollect: traces it closed as invalid
  uint64_t reduced_traces = 0;        // kCollectReduce: reduced traces it stored
  std::vector<double> traces_per_s;   // 1-second bins of the timed phase
};

// Runs one loop in `work_dir` (created and emptied by the caller).
LoopResult run_loop(const Config& config, const Workload& workload, const std::string& bench_dir,
                    const std::string& work_dir);

// Flow records one call of the workload produces in Kieker's shape:
// TraceMetadata + depth BeforeOperationEvents + depth AfterOperationEvents.
inline uint64_t records_per_call(const Workload& w) {
  return 2 * static_cast<uint64_t>(w.depth) + 1;
}

}  // namespace sonde::cli::bench
