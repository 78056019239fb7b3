// `sonde cull LOG --out patterns.txt`: the culling rule of `cull = auto`
// (monitor/cull_rule.hpp, docs/cull.md) applied to an existing log. The
// per-operation counts and inclusive durations come from the same trace
// analysis as `sonde summary`; a second sink over the same traces counts
// the monitored calls inside each execution (whose probes inflate its
// measured duration) and the log's time span. Writes a patterns file of
// `-name` lines for the next run (`--set patterns_file=FILE`) and prints
// what it excluded and the predicted probe cost before and after.
//
// Exit status: 0 ok; 1 the log cannot be read; 2 usage error.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/reconstruct/trace_analysis.hpp"
#include "cli/command.hpp"
#include "format/function_name.hpp"
#include "format/native_reader.hpp"
#include "format/operation_name.hpp"
#include "monitor/cull_rule.hpp"

namespace sonde::cli {
namespace {

namespace cull = monitor::cull;

struct CullOptions {
  std::string log;
  std::string out;
  std::string max_ns = "2000";
  std::string min_calls = "100";
  std::string min_rate = "1000";
  std::string probe_ns = "20";
  std::vector<std::string> keep;
};

// Per operation: the monitored calls inside its executions; and the log's
// first entry and last exit, for calls per second.
class CalleeCounter : public analysis::TraceSink {
 public:
  void on_trace(const analysis::Trace& trace) override {
    const std::vector<analysis::Execution>& ex = trace.executions;
    // An execution's callees are the executions after it, up to the next one
    // at its depth or shallower (eoi order).
    open_.clear();
    for (size_t i = 0; i <= ex.size(); ++i) {
      const int32_t ess = i < ex.size() ? ex[i].ess : std::numeric_limits<int32_t>::min();
      while (!open_.empty() && ex[open_.back()].ess >= ess) {
        const size_t j = open_.back();
        open_.pop_back();
        callees_[std::string(ex[j].operation)] += i - j - 1;
      }
      if (i == ex.size()) break;
      open_.push_back(i);
      first_ = std::min(first_, ex[i].tin);
      if (ex[i].tout >= 0) last_ = std::max(last_, ex[i].tout);
    }
  }
  void on_invalid_trace(const analysis::InvalidTrace&) override {}

  uint64_t callees(const std::string& operation) const {
    auto it = callees_.find(operation);
    return it == callees_.end() ? 0 : it->second;
  }
  double span_s() const { return last_ > first_ ? static_cast<double>(last_ - first_) / 1e9 : 0.0; }

 private:
  std::vector<size_t> open_;
  std::map<std::string, uint64_t> callees_;
  int64_t first_ = std::numeric_limits<int64_t>::max();
  int64_t last_ = std::numeric_limits<int64_t>::min();
};

// The analysis names operations as sonde's views do (format/operation_name.hpp:
// readable types, "std::string"), but patterns match the names libsonde
// resolved ("f(std::__cxx11::basic_string<…>)"). A native log keeps those, with each
// operation's module and kind: this pass maps the signatures back, and
// marks manual operations (SONDE_SCOPE, sonde_begin), which are never
// culled (their probes are placed on purpose).
struct OriginalName {
  std::string name;
  bool manual = false;
};

class OperationNames : public format::NativeVisitor {
 public:
  void on_operation(const format::NativeOperation& op) override {
    OriginalName& n =
        names_[format::operation_name(op.name, op.module, format::NameForm::kCpp, op.kind)
                   .operation];
    n.name = std::string(op.name);
    n.manual = op.kind == format::native::OperationKind::kManual;
  }
  // Reads every native log at `path` (a .sonde file or a directory of them).
  void read(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      if (format::looks_like_native_file(path)) format::read_native_file(path, *this);
      return;
    }
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".sonde") format::read_native_file(entry.path(), *this);
    }
  }
  // Kieker logs have only the signatures: those are what is written then.
  const OriginalName* find(const std::string& signature) const {
    auto it = names_.find(signature);
    return it == names_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, OriginalName> names_;
};

// The patterns' glob ('*' any run, '?' one character, the whole name):
// libsonde's matcher is hidden inside libsonde, which the CLI does not link.
bool cull_glob_match(std::string_view glob, std::string_view text) {
  size_t g = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == text[t])) {
      ++g;
      ++t;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

// By the name as recorded and as sonde's views show it
// (docs/formats/operation-names.md), so that a name copied from
// `sonde summary` pins its function.
bool kept_by_glob(const std::vector<std::string>& globs, const std::string& name) {
  const std::string shown = format::readable_type_names(name);
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return cull_glob_match(g, name) || cull_glob_match(g, shown);
  });
}

bool parse_cull_thresholds(const CullOptions& o, cull::Thresholds* t) {
  uint64_t max_ns = 0, min_calls = 0, min_rate = 0, probe_ns = 0;
  const std::pair<const std::string*, const char*> options[] = {{&o.max_ns, "--max-ns"},
                                                                {&o.min_calls, "--min-calls"},
                                                                {&o.min_rate, "--min-rate"},
                                                                {&o.probe_ns, "--probe-ns"}};
  uint64_t* values[] = {&max_ns, &min_calls, &min_rate, &probe_ns};
  for (size_t i = 0; i < 4; ++i) {
    // --min-rate may be 0; the others must be positive.
    if (!parse_number(*options[i].first, values[i]) || (i != 2 && *values[i] == 0)) {
      std::cerr << "sonde cull: " << options[i].second << " needs a "
                << (i == 2 ? "non-negative" : "positive") << " integer, got '" << *options[i].first
                << "'\n";
      return false;
    }
  }
  t->max_ns = static_cast<double>(max_ns);
  t->min_calls = min_calls;
  t->min_rate = static_cast<double>(min_rate);
  t->probe_ns = static_cast<double>(probe_ns);
  return true;
}

void print_cull_result(std::ostream& out, const cull::Report& r) {
  const cull::Round& round = r.rounds.front();
  const cull::Prediction p = cull::predict(round, r.thresholds.probe_ns);
  out << "Excluded " << round.culled << " of " << round.functions << " operations ("
      << cull::grouped(round.culled_calls) << " of " << cull::grouped(round.calls) << " calls in "
      << round.span_s << " s):\n";
  char line[128];
  for (const cull::ReportEntry& e : r.culled) {
    std::snprintf(line, sizeof line, "  %14s calls, own mean %10.1f ns  ",
                  cull::grouped(e.sample.calls).c_str(),
                  cull::own_mean_ns(e.sample, r.thresholds.probe_ns));
    out << line << e.name << "\n";
  }
  for (const cull::ReportEntry& e : r.pinned) out << "  kept by --keep: " << e.name << "\n";
  std::snprintf(line, sizeof line,
                "Predicted probe cost: %.1f -> %.1f ms per second (%s -> %smonitored calls/s x "
                "%.0f ns)\n",
                p.cost_ms_per_s_before, p.cost_ms_per_s_after,
                cull::si(p.calls_per_s_before).c_str(), cull::si(p.calls_per_s_after).c_str(),
                r.thresholds.probe_ns);
  out << line;
}

int run_cull(const CullOptions& o) {
  if (o.log.empty()) {
    std::cerr << "sonde cull: missing the LOG argument (a .sonde file or a log directory)\n";
    return kUsage;
  }
  cull::Report report;
  if (!parse_cull_thresholds(o, &report.thresholds)) return kUsage;
  std::error_code fs_error;
  if (!std::filesystem::exists(o.log, fs_error)) {
    std::cerr << "sonde cull: cannot read '" << o.log << "': no such file or directory\n";
    return kUnreadable;
  }

  // As `sonde summary` computes its per-operation statistics.
  analysis::AnalysisOptions options;
  options.build_call_tree = false;
  options.build_dependency_graph = false;
  analysis::TraceAnalysis analysis(options);
  CalleeCounter callees;
  analysis.add_sink(callees);
  format::LogReadStats read = format::read_log(o.log, analysis.records());
  analysis::AnalysisResult result = analysis.finish();
  for (const std::string& e : read.errors) std::cerr << "sonde cull: error: " << e << "\n";
  if (!read.ok && read.records == 0) {
    if (read.errors.empty()) std::cerr << "sonde cull: cannot read '" << o.log << "'\n";
    return kUnreadable;
  }

  OperationNames originals;
  originals.read(o.log);
  report.source = o.log;
  cull::Round round;
  round.span_s = callees.span_s();
  // By the name the patterns will match; one name may stand for several
  // signatures (the same inline function in several modules).
  std::map<std::string, cull::FunctionSample> by_name;
  std::map<std::string, bool> manual;
  for (const analysis::OperationStats& s : result.operations) {
    const std::string signature(s.key.operation);
    const OriginalName* original = originals.find(signature);
    // As patterns match functions (format/function_name.hpp).
    const std::string name =
        original != nullptr ? std::string(format::without_return_type(original->name)) : signature;
    cull::FunctionSample& f = by_name[name];
    f.calls += s.inclusive.count;
    f.total_ns += static_cast<double>(s.inclusive.total);
    f.callees += callees.callees(signature);
    manual[name] = manual[name] || (original != nullptr && original->manual);
  }
  std::vector<cull::ReportEntry> kept;
  for (auto& [name, f] : by_name) {
    round.calls += f.calls;
    ++round.functions;
    if (manual[name] || !cull::should_cull(f, round.span_s, report.thresholds)) {
      kept.push_back({name, f});
    } else if (kept_by_glob(o.keep, name)) {
      report.pinned.push_back({name, f});
    } else {
      report.culled.push_back({name, f});
      ++round.culled;
      round.culled_calls += f.calls;
    }
  }
  report.rounds.push_back(round);
  cull::sort_by_calls(report.culled);
  cull::sort_by_calls(report.pinned);
  cull::sort_by_calls(kept);
  if (kept.size() > 10) kept.resize(10);
  report.kept = std::move(kept);
  report.notes.push_back("Decided by `sonde cull` from the log (" +
                         cull::grouped(result.traces.valid) + " valid traces).");
  if (read.lost_reported > 0) {
    report.notes.push_back("The log reports " + cull::grouped(read.lost_reported) +
                           " lost events: counts are low.");
  }

  const std::string text = cull::format_report(report);
  if (o.out.empty()) {
    std::cout << text;
    print_cull_result(std::cerr, report);
    return read.ok ? kOk : kUnreadable;
  }
  std::ofstream file(o.out, std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    std::cerr << "sonde cull: cannot write '" << o.out << "'\n";
    return kFailed;
  }
  print_cull_result(std::cout, report);
  std::cout << "Patterns written to " << o.out << "; the next run excludes them with\n"
            << "  sonde run --set patterns_file=" << o.out << " -- PROGRAM ...\n";
  return read.ok ? kOk : kUnreadable;
}

void setup_cull(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CullOptions>();
  app.add_option("log", o->log, "The log: a .sonde file or a directory (native or Kieker)")
      ->type_name("LOG");
  app.add_option("--out", o->out,
                 "Write the patterns file here (default: the patterns to stdout, the result to "
                 "stderr)")
      ->type_name("FILE");
  app.add_option("--max-ns", o->max_ns,
                 "Cull below this own mean duration in ns (default 2000, as cull_max_ns)")
      ->type_name("NS");
  app.add_option("--min-calls", o->min_calls,
                 "Cull only operations with at least this many calls (default 100)")
      ->type_name("N");
  app.add_option("--min-rate", o->min_rate,
                 "Cull only operations called at least this many times per second of the log "
                 "(default 1000)")
      ->type_name("N");
  app.add_option("--probe-ns", o->probe_ns,
                 "The cost of one monitored call in ns (default 20, as cull_probe_ns)")
      ->type_name("NS");
  app.add_option("--keep", o->keep,
                 "Never cull operations whose name matches this glob (repeatable; '*' and '?')")
      ->type_name("GLOB");
  app.footer("Exit status: 0 ok, 1 the log cannot be read, 2 usage error. See docs/cull.md.");
  app.callback([o, &exit_code] { exit_code = run_cull(*o); });
}

}  // namespace

SONDE_COMMAND("cull",
              "Find the functions of a log that cost more to trace than they tell, and write "
              "patterns that exclude them",
              setup_cull);

}  // namespace sonde::cli
