// Results of `sonde bench` and their forms: the JSON and CSV result files,
// the human table, and the SVG plots (docs/bench.md describes them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/bench_runner.hpp"
#include "cli/bench_stats.hpp"

namespace sonde::cli::bench {

struct ConfigResult {
  std::string name, group, skip_reason;
  bool writes = false;  // a sonde writer whose records are counted back
  Summary summary;      // ns per monitored call over every timed call of every loop
  std::vector<double> loop_means;
  uint64_t records_produced = 0;  // from the workload's parameters, all loops
  uint64_t records_written = 0;   // read back from the log / received over TCP
  uint64_t events_recorded = 0, events_written = 0, events_dropped = 0;
  // Live analysis (collector) configurations: traces of the workload (one
  // per call, warm-up included) against traces the collector reconstructed.
  bool reconstructs = false;
  uint64_t traces_expected = 0, traces_reconstructed = 0, traces_invalid = 0;
  uint64_t reduced_traces = 0;            // with --reduce: the rows the traces were reduced to
  double bytes_per_event = 0;             // median over loops; 0 when nothing is written
  double traces_per_s = 0;                // median over loops of the mean of full 1 s bins
  std::vector<double> traces_per_s_bins;  // the first loop's 1 s bins
  std::vector<std::string> errors;
};

struct PointResult {
  std::string experiment, label;
  Workload workload;
  std::vector<ConfigResult> configs;
  const ConfigResult* find(const std::string& name) const;
};

struct Report {
  nlohmann::json machine;
  int loops = 0;
  bool quick = false;
  double timestamp_ns = 0;  // one timestamp as the monitor takes it, measured here
  std::vector<PointResult> points;
};

nlohmann::json to_json(const Report& r);
std::string to_csv(const Report& r);
std::string to_table(const Report& r);
// Writes icw.svg (stacked I/C/W per writer) and, with a depth experiment,
// depth.svg. Returns "" or the error.
std::string write_svgs(const Report& r, const std::string& dir);

}  // namespace sonde::cli::bench
