// `sonde traces LOG`: what traces a log holds.
//   --summary           counts: records, traces, invalid traces, records per type
//   (default)           a list of traces, filtered and ranked (bounded memory)
//   --show ID           one trace as a call tree with inclusive/exclusive times
// Every mode has --json. Works on any log read_log understands.
//
// Exit status: 0 ok; 1 the log cannot be read, or --show names a trace the
// log does not have; 2 usage error.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/kieker/trace_tree_text.hpp"
#include "analysis/reconstruct/trace_analysis.hpp"
#include "analysis/reconstruct/trace_catalog.hpp"
#include "analysis/render/report_csv.hpp"
#include "analysis/render/report_text.hpp"
#include "analysis/text/duration_format.hpp"
#include "analysis/text/text_table.hpp"
#include "cli/command.hpp"

namespace sonde::cli {
namespace {

using nlohmann::json;

struct TracesOptions {
  std::string log;
  bool summary = false;
  bool json = false;
  bool csv = false;
  std::string show;
  std::string limit = "20";
  std::string sort = "start";
  std::string operation;
  std::string host;
  std::string min_duration;
  std::string max_duration;
  bool failed = false;
  bool invalid = false;
  bool with_invalid = false;
  bool repair = false;
};

void print_json(const json& doc) {
  // Names come from the monitored program: never let bad UTF-8 abort the dump.
  std::cout << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

// Captures the one trace --show asks for (valid or not).
class TraceCapture final : public analysis::TraceSink {
 public:
  explicit TraceCapture(int64_t id) : id_(id) {}
  void on_trace(const analysis::Trace& t) override {
    if (t.trace_id == id_) trace = t;
  }
  void on_invalid_trace(const analysis::InvalidTrace& t) override {
    if (t.trace_id != id_) return;
    trace = t.partial;
    trace->trace_id = t.trace_id;
    for (const analysis::TraceProblem& p : t.problems) {
      problems.push_back(std::string(analysis::to_string(p.kind)) + ": " + p.detail);
    }
  }
  std::optional<analysis::Trace> trace;
  std::vector<std::string> problems;

 private:
  int64_t id_;
};

json summary_json(const analysis::AnalysisResult& r) {
  json types = json::object();
  for (const auto& [name, count] : r.record_types) types[name] = count;
  return {{"records", r.reconstruction.records}, {"traces", r.traces.valid + r.traces.invalid},
          {"invalid_traces", r.traces.invalid},  {"record_types", types},
          {"lost_events", r.read.lost_reported}, {"errors", r.read.errors},
          {"warnings", r.read.warnings}};
}

void print_summary_text(const analysis::AnalysisResult& r) {
  std::cout << "Log:      " << r.path << " (" << analysis::log_kind_name(r.kind) << ")\n"
            << "Records:  " << r.reconstruction.records << "\n"
            << "Traces:   " << r.traces.valid + r.traces.invalid << " (" << r.traces.invalid
            << " invalid)\n";
  if (r.read.lost_reported > 0) {
    std::cout << "Lost:     " << r.read.lost_reported << " events (reported by the monitor)\n";
  }
  std::cout << "\nRecords per type:\n";
  analysis::TextTable table({"count", "type"});
  for (const auto& [name, count] : r.record_types) table.add_row({std::to_string(count), name});
  table.write(std::cout);
}

json entry_json(const analysis::TraceEntry& e) {
  json j = {{"trace_id", e.trace_id},
            {"root_operation", e.root_operation},
            {"host", e.host},
            {"thread_id", e.thread_id},
            {"start_ns", e.start},
            {"duration_ns", e.duration},
            {"executions", e.executions},
            {"failed_executions", e.failed},
            {"valid", e.valid}};
  if (e.parent_trace_id >= 0 && e.parent_trace_id != e.trace_id) {
    j["parent_trace_id"] = e.parent_trace_id;
  }
  if (!e.valid) j["problem"] = e.problem;
  return j;
}

void print_list_csv(const std::vector<analysis::TraceEntry>& entries) {
  std::cout << "trace_id,start_ns,duration_ns,executions,failed_executions,host,thread_id,"
               "parent_trace_id,valid,root_operation,problem\n";
  for (const analysis::TraceEntry& e : entries) {
    std::cout << e.trace_id << ',' << e.start << ',' << e.duration << ',' << e.executions << ','
              << e.failed << ',' << analysis::csv_field(e.host) << ',' << e.thread_id << ','
              << e.parent_trace_id << ',' << (e.valid ? "true" : "false") << ','
              << analysis::csv_field(e.root_operation) << ',' << analysis::csv_field(e.problem)
              << '\n';
  }
}

void print_list_text(const std::vector<analysis::TraceEntry>& entries, uint64_t matched) {
  analysis::TextTable table({"trace id", "duration", "calls", "failed", "host", "root operation"});
  for (const analysis::TraceEntry& e : entries) {
    std::string root = e.root_operation.empty() ? "(none)" : e.root_operation;
    if (!e.valid) root += "  [invalid: " + e.problem + "]";
    table.add_row({std::to_string(e.trace_id),
                   analysis::format_duration(static_cast<double>(e.duration)),
                   std::to_string(e.executions), std::to_string(e.failed), e.host, root});
  }
  table.write(std::cout);
  std::cout << "\n"
            << entries.size() << " of " << matched << " matching traces shown"
            << (entries.size() < matched ? " (use --limit to see more)" : "") << "\n";
}

json trace_json(const analysis::Trace& t, const std::vector<std::string>& problems) {
  json executions = json::array();
  for (const analysis::Execution& e : t.executions) {
    json x = {
        {"eoi", e.eoi},   {"ess", e.ess},    {"operation", e.operation}, {"component", e.component},
        {"host", e.host}, {"tin_ns", e.tin}, {"tout_ns", e.tout}};
    if (e.failed) x["failed"] = {{"cause", e.cause}};
    if (e.repaired) x["repaired"] = true;
    executions.push_back(std::move(x));
  }
  json j = {{"trace_id", t.trace_id},
            {"host", t.host},
            {"thread_id", t.thread_id},
            {"session", t.session},
            {"parent_trace_id", t.parent_trace_id},
            {"parent_order_id", t.parent_order_id},
            {"valid", problems.empty()},
            {"executions", executions}};
  if (!problems.empty()) j["problems"] = problems;
  return j;
}

bool parse_count(const std::string& text, size_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_trace_id(const std::string& text, int64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

int usage(const std::string& message) {
  std::cerr << "sonde traces: " << message << "\n";
  return kUsage;
}

int run_traces(const TracesOptions& o) {
  if (o.log.empty()) return usage("missing the LOG argument (a log file or directory)");
  const int modes = int{o.summary} + int{!o.show.empty()};
  if (modes > 1) return usage("--summary and --show cannot be combined");
  if (o.csv && (o.json || modes > 0))
    return usage("--csv is for the trace list only, without --json");
  analysis::TraceFilter filter;
  filter.operation = o.operation;
  filter.host = o.host;
  filter.only_failed = o.failed;
  filter.only_invalid = o.invalid;
  filter.include_invalid = o.with_invalid;
  if (!o.min_duration.empty() && !analysis::parse_duration(o.min_duration, &filter.min_duration)) {
    return usage("--min-duration needs a duration like 250us, 12ms or 1.5s; got '" +
                 o.min_duration + "'");
  }
  if (!o.max_duration.empty() && !analysis::parse_duration(o.max_duration, &filter.max_duration)) {
    return usage("--max-duration needs a duration like 250us, 12ms or 1.5s; got '" +
                 o.max_duration + "'");
  }
  size_t limit = 0;
  if (!parse_count(o.limit, &limit)) return usage("--limit needs a number, got '" + o.limit + "'");
  if (o.sort != "start" && o.sort != "duration") {
    return usage("unknown --sort '" + o.sort + "' (start or duration)");
  }
  int64_t show_id = 0;
  if (!o.show.empty() && !parse_trace_id(o.show, &show_id)) {
    return usage("--show needs a trace id (an integer), got '" + o.show + "'");
  }
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde traces: cannot read '" << o.log << "': no such file or directory\n";
    return kFailed;
  }

  analysis::AnalysisOptions options;
  options.reconstruction.repair_event_traces = o.repair;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  analysis::TraceAnalysis analysis(options);
  analysis::TraceCatalog catalog(
      filter, o.sort == "duration" ? analysis::TraceOrder::kLongest : analysis::TraceOrder::kStart,
      limit);
  TraceCapture capture(show_id);
  if (!o.summary)
    analysis.add_sink(o.show.empty() ? static_cast<analysis::TraceSink&>(catalog)
                                     : static_cast<analysis::TraceSink&>(capture));
  const format::LogReadStats read = format::read_log(o.log, analysis.records());
  analysis::AnalysisResult result = analysis.finish();
  result.path = o.log;
  result.kind = format::detect_log_kind(o.log);
  result.read = read;

  for (const std::string& e : read.errors) std::cerr << "sonde traces: error: " << e << "\n";
  for (const std::string& w : read.warnings) std::cerr << "sonde traces: warning: " << w << "\n";
  if (!read.ok && read.records == 0) return kFailed;

  if (o.summary) {
    if (o.json) {
      print_json(summary_json(result));
    } else {
      print_summary_text(result);
    }
  } else if (!o.show.empty()) {
    if (!capture.trace) {
      std::cerr << "sonde traces: '" << o.log << "' has no trace with id " << show_id << "\n";
      return kFailed;
    }
    if (o.json) {
      print_json(trace_json(*capture.trace, capture.problems));
    } else {
      analysis::write_trace_tree(std::cout, *capture.trace);
      for (const std::string& p : capture.problems) std::cout << "\ninvalid: " << p << "\n";
    }
  } else if (o.csv) {
    print_list_csv(catalog.entries());
  } else if (o.json) {
    json list = json::array();
    for (const analysis::TraceEntry& e : catalog.entries()) list.push_back(entry_json(e));
    print_json({{"matched", catalog.matched()}, {"traces", list}});
  } else {
    print_list_text(catalog.entries(), catalog.matched());
  }
  std::cout.flush();
  return read.ok ? kOk : kFailed;
}

void setup_traces(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<TracesOptions>();
  // Validation happens in run_traces so that every usage error exits with 2.
  app.add_option("log", o->log, "The log: a .sonde file, a Kieker directory, ...")
      ->type_name("LOG");
  app.add_flag("--summary", o->summary,
               "Counts only: records, traces, invalid traces, records per type");
  app.add_option("--show", o->show, "Print one trace as a call tree")->type_name("TRACE_ID");
  app.add_flag("--json", o->json, "Machine-readable output");
  app.add_flag("--csv", o->csv, "The trace list as CSV (durations in ns)");
  app.add_option("--limit", o->limit, "List at most N traces (default 20; 0 = count only)")
      ->type_name("N");
  app.add_option("--sort", o->sort, "start (default: earliest first) or duration (longest first)")
      ->type_name("KEY");
  app.add_option("--operation", o->operation, "Only traces whose root operation contains TEXT")
      ->type_name("TEXT");
  app.add_option("--host", o->host, "Only traces recorded on HOST")->type_name("HOST");
  app.add_option("--min-duration", o->min_duration, "Only traces at least this long (e.g. 5ms)")
      ->type_name("DURATION");
  app.add_option("--max-duration", o->max_duration, "Only traces at most this long")
      ->type_name("DURATION");
  app.add_flag("--failed", o->failed, "Only traces with a failed execution");
  app.add_flag("--invalid", o->invalid, "Only invalid traces, with the reason");
  app.add_flag("--with-invalid", o->with_invalid, "List invalid traces too");
  app.add_flag("--repair", o->repair,
               "Synthesise missing after events (Kieker's --repair-event-based-traces)");
  app.footer(
      "Exit status: 0 ok, 1 the log cannot be read or the trace does not exist, 2 usage error.");
  app.callback([o, &exit_code] { exit_code = run_traces(*o); });
}

}  // namespace

SONDE_COMMAND("traces", "List, count or show the traces of a log", setup_traces);

}  // namespace sonde::cli
