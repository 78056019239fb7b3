#include <algorithm>
#include <cmath>
#include <filesystem>

#include "diagnose/diagnosis.hpp"
#include "diagnose/engine/cpu_accounting.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/report.hpp"
#include "stats/descriptive.hpp"

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

// Whether the run used a closed workload: its config (run.json) has no
// positive arrival_rate_per_user. Unknown (no run.json config): false.
bool closed_workload(const ExperimentData& data) {
  if (!data.run.is_object() || !data.run.contains("config") || !data.run["config"].is_object())
    return false;
  const nlohmann::json& c = data.run["config"];
  const auto rate = c.find("arrival_rate_per_user");
  return rate == c.end() || !rate->is_number() || rate->get<double>() <= 0;
}

// The CPU utilization of an experiment: the CPU sampler's records, else
// the engine's accounting of the whole machine; -1 unknown.
double utilization_of(const Experiment& e) {
  double u = 0;
  int cores = 0;
  std::string error;
  if (heuristics::cpu_utilization(e, &u, &cores, &error)) return u;
  return e.busy_cpu_share;
}

// The closed-workload warning (report.hpp): the most striking case, or "".
std::string hidden_pause_warning(const ExperimentData& data, const Settings& settings) {
  if (!closed_workload(data)) return "";
  struct Case {
    const Experiment* e = nullptr;
    std::string service;
    double max_ms = 0, percentile_ms = 0, utilization = 0, percentile = 0;
  } worst;
  int cases = 0;
  for (const Experiment& e : data.experiments) {
    if (!e.complete()) continue;
    const double u = utilization_of(e);
    if (u < 0 || u > kHiddenPauseMaxUtilization) continue;
    for (const std::string& service : e.services()) {
      const std::vector<double> rt = e.response_times(service);
      if (rt.empty()) continue;
      const Requirement& req = settings.for_service(service);
      const double p = stats::percentile(rt, req.percentile);
      const double max = *std::max_element(rt.begin(), rt.end());
      if (!(p > 0 && max > req.threshold_ms && max >= kHiddenPauseFactor * p)) continue;
      ++cases;
      if (worst.e == nullptr || max / p > worst.max_ms / worst.percentile_ms)
        worst = {&e, service, max, p, u, req.percentile};
    }
  }
  if (worst.e == nullptr) return "";
  const Experiment& e = *worst.e;
  const double duration = e.duration_s();
  const double rate = duration > 0 && e.users > 0
                          ? static_cast<double>(e.response_times().size()) / duration / e.users
                          : 0;
  std::string out_dir = "DIR";
  if (std::filesystem::path(data.dir).filename() == "data")
    out_dir = std::filesystem::path(data.dir).parent_path().string();
  const std::string pct = heuristics::fmt(worst.percentile * 100);
  const std::string rate_text = heuristics::fmt(rate);
  return "Pauses may be hidden by the closed workload: in " + e.id + " (" +
         std::to_string(e.users) + " users) the slowest request of " + worst.service + " took " +
         heuristics::fmt(worst.max_ms) + " ms, " +
         heuristics::fmt(worst.max_ms / worst.percentile_ms) + " times its P" + pct + " of " +
         heuristics::fmt(worst.percentile_ms) + " ms, at " +
         heuristics::fmt(worst.utilization * 100) + "% CPU utilization" +
         (cases > 1 ? " (" + std::to_string(cases) + " services x experiments like it)" : "") +
         ". Queueing at this utilization does not make such a tail: the system under test "
         "probably paused (garbage collection, a stop-the-world phase, a blocking flush). In a "
         "closed workload each user is caught once per pause and then waits, so few requests "
         "see it and the percentile stays low. Rerun with the open workload, where requests keep "
         "arriving during a pause: set \"arrival_rate_per_user\": " +
         rate_text +
         " in the config (the request rate per user measured here) and run `sonde diagnose "
         "--config CONFIG --out " +
         out_dir +
         "` again (for the demo: the same `sonde demo` command, its problems and database "
         "included, with `--arrival-rate-per-user " +
         rate_text + "` added).";
}

}  // namespace

ReportMeta report_meta(const ExperimentData& data) { return report_meta(data, Settings{}); }

ReportMeta report_meta(const ExperimentData& data, const Settings& settings) {
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
  if (std::string w = hidden_pause_warning(data, settings); !w.empty())
    m.warnings.push_back(std::move(w));
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
