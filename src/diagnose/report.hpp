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

ReportMeta report_meta(const ExperimentData& data);

nlohmann::json report_json(const NodeResult& root, const ReportMeta& meta);
std::string report_html(const NodeResult& root, const ReportMeta& meta);
std::string report_summary(const NodeResult& root, const ReportMeta& meta);

// Writes report.json and report.html into `dir` (created). Throws
// DiagnoseError naming the file when writing fails.
void write_report(const NodeResult& root, const ReportMeta& meta, const std::string& dir);

}  // namespace sonde::diagnose
