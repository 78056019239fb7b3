// The diagnosis report (docs/diagnose/report.md): report.json (the
// annotated hierarchy), report.html (self-contained, SVG charts, written
// for someone who is not a performance expert) and a terminal summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/experiment_data.hpp"
#include "diagnose/heuristic.hpp"

namespace sonde::diagnose {

struct ReportMeta {
  std::string data_dir;
  bool complete = true;  // false: the run stopped early (run.json status)
  std::string incomplete_reason;
  int experiments = 0;
  // About the measurement, not a verdict: a busy machine (other processes
  // took a large share of the CPUs during some experiments).
  std::vector<std::string> warnings;
};

// The closed-workload warning (sonde's own rule, not the thesis'): in an
// experiment of a closed workload, a service's slowest request took more
// than its requirement's threshold and at least kHiddenPauseFactor times
// its requirement's percentile, while the CPUs were at most
// kHiddenPauseMaxUtilization busy. Queueing at that utilization does not
// make such a tail (an exponential response time, M/M/1's, has max / P90
// = ln(n) / ln(10), about 4 for 10^4 requests; at 50% utilization M/M/1's
// mean is twice its service time), so the system paused, and a closed
// workload hides pauses: each user is caught once per pause and waits
// instead of sending more (docs/diagnose/report.md).
inline constexpr double kHiddenPauseFactor = 10;
inline constexpr double kHiddenPauseMaxUtilization = 0.5;

// Measurement warnings with the default requirement (1000 ms at P99).
ReportMeta report_meta(const ExperimentData& data);
// The same with the diagnosis' requirements (the closed-workload warning
// compares each service's slowest request with its own requirement).
ReportMeta report_meta(const ExperimentData& data, const Settings& settings);

nlohmann::json report_json(const NodeResult& root, const ReportMeta& meta);
std::string report_html(const NodeResult& root, const ReportMeta& meta);
std::string report_summary(const NodeResult& root, const ReportMeta& meta);

// Writes report.json and report.html into `dir` (created). Throws
// DiagnoseError naming the file when writing fails.
void write_report(const NodeResult& root, const ReportMeta& meta, const std::string& dir);

}  // namespace sonde::diagnose
