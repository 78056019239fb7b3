#include <algorithm>
#include <cmath>

#include "diagnose/diagnosis.hpp"
#include "diagnose/engine/cpu_accounting.hpp"
#include "diagnose/report.hpp"

namespace sonde::diagnose {
namespace {

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json node_json(const NodeResult& r) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const Evidence& e : r.evidence) {
    evidence.push_back({{"location", e.location},
                        {"test", e.test},
                        {"p_value", number_or_null(e.p_value)},
                        {"effect_size", number_or_null(e.effect_size)},
                        {"effect", e.effect},
                        {"data", e.data},
                        {"detail", e.detail},
                        {"values", e.values}});
  }
  nlohmann::json children = nlohmann::json::array();
  for (const NodeResult& c : r.children) children.push_back(node_json(c));
  return {{"id", r.id},         {"heuristic", r.heuristic},
          {"title", r.title},   {"status", status_name(r.status)},
          {"reason", r.reason}, {"evidence", evidence},
          {"charts", r.charts}, {"children", children}};
}

}  // namespace

ReportMeta report_meta(const ExperimentData& data) {
  ReportMeta m;
  m.data_dir = data.dir;
  m.experiments = static_cast<int>(data.experiments.size());
  if (data.run.is_object() && data.run.contains("status") && data.run["status"].is_string()) {
    m.complete = data.run["status"].get<std::string>() != "incomplete";
    if (data.run.contains("reason") && data.run["reason"].is_string()) {
      m.incomplete_reason = data.run["reason"].get<std::string>();
    }
  }
  std::string busy;
  int busy_n = 0;
  double worst = 0;
  for (const Experiment& e : data.experiments) {
    if (e.other_cpu_share < engine::kBusyMachineShare) continue;
    ++busy_n;
    worst = std::max(worst, e.other_cpu_share);
    busy += (busy.empty() ? "" : ", ") + e.id + " " +
            std::to_string(std::lround(e.other_cpu_share * 100)) + "%";
  }
  if (busy_n > 0) {
    m.warnings.push_back(
        "Other processes on this machine used up to " + std::to_string(std::lround(worst * 100)) +
        "% of its CPUs during " + std::to_string(busy_n) + " of " +
        std::to_string(data.experiments.size()) + " experiments (" + busy +
        "). Verdicts that weigh waiting against CPU queueing (One Lane Bridge, Database "
        "Congestion, Database One Lane Bridge) may be off. If those processes are part of the "
        "system under test (a database or broker this diagnosis did not start), that is "
        "expected; otherwise diagnose again on a quiet machine.");
  }
  return m;
}

nlohmann::json report_json(const NodeResult& root, const ReportMeta& meta) {
  const ResultCounts c = count_results(root);
  return {{"format", "sonde-diagnosis/1"},
          {"data", meta.data_dir},
          {"complete", meta.complete},
          {"incomplete_reason", meta.incomplete_reason},
          {"experiments", meta.experiments},
          {"warnings", meta.warnings},
          {"counts",
           {{"detected", c.detected},
            {"not_detected", c.not_detected},
            {"skipped", c.skipped},
            {"not_evaluated", c.not_evaluated}}},
          {"root", node_json(root)}};
}

}  // namespace sonde::diagnose
