// `sonde summary LOG`: reconstructs the traces of a log (native or Kieker)
// and prints what the reader found, how many traces were valid and why the
// others were not, and per-operation response-time statistics.
//
// Exit status: 0 ok; 1 the log cannot be read (or the reader reported
// errors: the report is still printed for what could be read); 2 usage error.
// The JSON output lives here because the CLI links nlohmann-json.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/render/report_csv.hpp"
#include "analysis/render/report_text.hpp"
#include "cli/command.hpp"

namespace sonde::cli {
namespace {

struct SummaryOptions {
  std::string log;
  std::string format = "table";
  std::string top = "0";
  bool repair = false;
  bool per_host = false;
};

nlohmann::json distribution_json(const analysis::DistributionSummary& s) {
  return {{"count", s.count}, {"total", s.total},   {"mean", s.mean}, {"std", s.stddev},
          {"min", s.min},     {"median", s.median}, {"p90", s.p90},   {"p95", s.p95},
          {"p99", s.p99},     {"max", s.max}};
}

void write_json(std::ostream& out, const analysis::AnalysisResult& r, size_t top) {
  using nlohmann::json;
  json log = {{"path", r.path},
              {"kind", analysis::log_kind_name(r.kind)},
              {"records", r.read.records},
              {"skipped", r.read.skipped},
              {"lost_events", r.read.lost_reported},
              {"files", r.read.files},
              {"errors", r.read.errors},
              {"warnings", r.read.warnings},
              {"records_not_used", r.reconstruction.ignored_by_type}};
  const analysis::TraceCounts& t = r.traces;
  json reasons = json::array();
  for (const analysis::ProblemCount& p : t.problems) {
    reasons.push_back({{"kind", analysis::to_string(p.kind)},
                       {"traces", p.traces},
                       {"example", p.example},
                       {"example_trace_id", p.example_trace_id}});
  }
  using analysis::CloseCause;
  json traces = {
      {"total", t.valid + t.invalid},
      {"valid", t.valid},
      {"invalid", t.invalid},
      {"invalid_reasons", reasons},
      {"closed_incomplete",
       {{"end_of_input", t.invalid_closed_by[static_cast<size_t>(CloseCause::kEndOfInput)]},
        {"timeout", t.invalid_closed_by[static_cast<size_t>(CloseCause::kTimeout)]},
        {"evicted", t.invalid_closed_by[static_cast<size_t>(CloseCause::kEvicted)]}}},
      {"repaired", t.repaired_traces},
      {"executions", t.executions},
      {"failed_executions", t.failed_executions},
      {"max_depth", t.max_depth},
      {"duration_ns", distribution_json(t.durations)}};
  json operations = json::array();
  const size_t shown = top == 0 ? r.operations.size() : std::min(top, r.operations.size());
  for (size_t i = 0; i < shown; ++i) {
    const analysis::OperationStats& s = r.operations[i];
    operations.push_back({{"host", s.key.host},
                          {"component", s.key.component},
                          {"operation", s.key.operation},
                          {"count", s.count},
                          {"failed", s.failed},
                          {"inclusive_ns", distribution_json(s.inclusive)},
                          {"exclusive_ns", distribution_json(s.exclusive)}});
  }
  const json doc = {{"log", log}, {"traces", traces}, {"operations", operations}};
  // Names come from the monitored program: never let bad UTF-8 abort the dump.
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

int run_summary(const SummaryOptions& o) {
  if (o.log.empty()) {
    std::cerr << "sonde summary: missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  if (o.format != "table" && o.format != "csv" && o.format != "json") {
    std::cerr << "sonde summary: unknown --format '" << o.format << "' (table, csv or json)\n";
    return kUsage;
  }
  size_t top = 0;
  const auto [end, ec] = std::from_chars(o.top.data(), o.top.data() + o.top.size(), top);
  if (ec != std::errc() || end != o.top.data() + o.top.size()) {
    std::cerr << "sonde summary: --top needs a number, got '" << o.top << "'\n";
    return kUsage;
  }
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde summary: cannot read '" << o.log << "': no such file or directory\n";
    return kUnreadable;
  }

  analysis::AnalysisOptions options;
  options.reconstruction.repair_event_traces = o.repair;
  options.statistics_level =
      o.per_host ? analysis::AggregationLevel::kDeployment : analysis::AggregationLevel::kAssembly;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  const analysis::AnalysisResult result = analysis::analyze_log(o.log, options);

  for (const std::string& e : result.read.errors)
    std::cerr << "sonde summary: error: " << e << "\n";
  if (result.read.lost_reported > 0) {
    std::cerr << "sonde summary: warning: '" << o.log << "': the monitor reported "
              << result.read.lost_reported << " lost events; results are incomplete\n";
  }
  if (!result.read.ok && result.read.records == 0) {
    if (result.read.errors.empty()) {
      std::cerr << "sonde summary: cannot read '" << o.log << "'\n";
    }
    return kUnreadable;
  }

  if (o.format == "json") {
    write_json(std::cout, result, top);
  } else if (o.format == "csv") {
    analysis::write_operations_csv(std::cout, result.operations, top);
  } else {
    analysis::write_text_report(std::cout, result, {top});
  }
  std::cout.flush();
  return result.read.ok ? kOk : kUnreadable;
}

void setup_summary(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SummaryOptions>();
  // Validation happens in run_summary so that every usage error exits with 2.
  app.add_option("log", o->log, "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_option("--format", o->format, "table (default), csv or json")->type_name("FORMAT");
  app.add_option("--top", o->top, "List only the N operations with the most total time")
      ->type_name("N");
  app.add_flag("--repair", o->repair,
               "Synthesise missing after events (Kieker's --repair-event-based-traces)");
  app.add_flag("--per-host", o->per_host, "Statistics per host and operation");
  app.footer(
      "Exit status: 0 ok, 1 the log cannot be read (or the reader reported errors), 2 usage "
      "error.");
  app.callback([o, &exit_code] { exit_code = run_summary(*o); });
}

}  // namespace

SONDE_COMMAND("summary", "Reconstruct the traces of a log and print statistics per operation",
              setup_summary);

}  // namespace sonde::cli
