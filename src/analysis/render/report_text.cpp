#include "analysis/render/report_text.hpp"

#include <string>
#include <vector>

#include "analysis/text/duration_format.hpp"
#include "analysis/text/text_table.hpp"

namespace sonde::analysis {
namespace {

std::string d(double ns) { return format_duration(ns); }
std::string d(int64_t ns) { return format_duration(static_cast<double>(ns)); }

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string operation_name(const OperationStats& s) {
  std::string name;
  if (!s.key.host.empty()) name += std::string(s.key.host) + "::";
  name += s.key.operation;
  return name;
}

void write_lost_events_banner(std::ostream& out, uint64_t lost) {
  const std::string line(72, '!');
  out << line << '\n'
      << "!! LOST EVENTS: the monitor reported " << lost << " events lost while writing this log.\n"
      << "!! Traces touched by the loss are incomplete or invalid, and the statistics\n"
      << "!! below undercount. Use larger buffers or a faster writer for complete data.\n"
      << line << "\n\n";
}

void write_log_section(std::ostream& out, const AnalysisResult& r) {
  out << "Log:       " << (r.path.empty() ? "(records)" : r.path) << " (" << log_kind_name(r.kind)
      << ")\n";
  out << "Records:   " << r.read.records << " read";
  if (r.read.skipped > 0) out << ", " << r.read.skipped << " skipped by the reader";
  if (r.reconstruction.ignored_records > 0) {
    out << ", " << r.reconstruction.ignored_records << " not used by trace analysis";
  }
  out << "\n";
  if (!r.read.files.empty())
    out << "Files:     " << plural(r.read.files.size(), "data file", "data files") << "\n";
  // A flight-recorder snapshot says why it was taken.
  for (const std::string& reason : r.read.snapshot_reasons) out << "Snapshot:  " << reason << "\n";
  for (const auto& [type, count] : r.reconstruction.ignored_by_type) {
    out << "  not used: " << count << " x " << type << "\n";
  }
  if (r.read.lost_reported > 0) {
    out << "Lost:      " << r.read.lost_reported << " events reported lost by the monitor\n";
  }
  if (!r.read.errors.empty()) {
    out << "Errors:    " << r.read.errors.size() << "\n";
    for (const auto& e : r.read.errors) out << "  error: " << e << "\n";
  }
  if (!r.read.warnings.empty()) {
    out << "Warnings:  " << r.read.warnings.size() << "\n";
    for (const auto& w : r.read.warnings) out << "  warning: " << w << "\n";
  }
}

void write_trace_section(std::ostream& out, const AnalysisResult& r) {
  const TraceCounts& t = r.traces;
  out << "\nTraces:    " << (t.valid + t.invalid) << " (" << t.valid << " valid, " << t.invalid
      << " invalid)\n";
  if (t.valid + t.invalid == 0) {
    out << "  no trace records (TraceMetadata/operation events or OperationExecutionRecords)\n";
    return;
  }
  if (t.invalid > 0) {
    out << "  invalid traces by main reason:\n";
    for (const ProblemCount& p : t.problems) {
      out << "    " << p.traces << " x " << to_string(p.kind) << ", e.g. trace "
          << p.example_trace_id << ": " << p.example << "\n";
    }
    const auto& by = t.invalid_closed_by;
    out << "  closed before complete: " << by[static_cast<size_t>(CloseCause::kEndOfInput)]
        << " at end of input, " << by[static_cast<size_t>(CloseCause::kTimeout)] << " by timeout, "
        << by[static_cast<size_t>(CloseCause::kEvicted)] << " evicted (too many open traces)\n";
  }
  if (t.repaired_traces > 0) {
    out << "  repaired: " << t.repaired_traces << " valid traces have synthesised after events\n";
  }
  out << "Executions: " << t.executions << " in valid traces (" << t.failed_executions
      << " failed), max call depth " << t.max_depth << "\n";
  if (t.valid > 0) {
    const DistributionSummary& s = t.durations;
    out << "Trace duration: mean " << d(s.mean) << ", std " << d(s.stddev) << ", min " << d(s.min)
        << ", median " << d(s.median) << ", p90 " << d(s.p90) << ", p95 " << d(s.p95) << ", p99 "
        << d(s.p99) << ", max " << d(s.max) << "\n";
  }
}

void write_operation_tables(std::ostream& out, const AnalysisResult& r, size_t top) {
  const auto& ops = r.operations;
  if (ops.empty()) return;
  const size_t shown = top == 0 ? ops.size() : std::min(top, ops.size());
  out << "\nOperations by total inclusive time";
  if (shown < ops.size()) out << " (top " << shown << " of " << ops.size() << ")";
  out << ":\n\nInclusive time (tout - tin):\n";
  TextTable inclusive({"count", "failed", "total", "mean", "std", "min", "median", "p90", "p95",
                       "p99", "max", "operation"});
  for (size_t i = 0; i < shown; ++i) {
    const OperationStats& s = ops[i];
    const DistributionSummary& x = s.inclusive;
    inclusive.add_row({std::to_string(s.count), std::to_string(s.failed), d(x.total), d(x.mean),
                       d(x.stddev), d(x.min), d(x.median), d(x.p90), d(x.p95), d(x.p99), d(x.max),
                       operation_name(s)});
  }
  inclusive.write(out);
  out << "\nExclusive time (inclusive minus direct callees):\n";
  TextTable exclusive(
      {"total", "mean", "std", "min", "median", "p90", "p95", "p99", "max", "operation"});
  for (size_t i = 0; i < shown; ++i) {
    const OperationStats& s = ops[i];
    const DistributionSummary& x = s.exclusive;
    exclusive.add_row({d(x.total), d(x.mean), d(x.stddev), d(x.min), d(x.median), d(x.p90),
                       d(x.p95), d(x.p99), d(x.max), operation_name(s)});
  }
  exclusive.write(out);
}

}  // namespace

std::string_view log_kind_name(format::LogKind kind) {
  switch (kind) {
    case format::LogKind::kNative:
      return "native sonde log";
    case format::LogKind::kKiekerDirectory:
      return "Kieker filesystem log";
    case format::LogKind::kOpenXtrace:
      return "OPEN.xtrace JSON";
    case format::LogKind::kUnknown:
      break;
  }
  return "unknown log kind";
}

void write_text_report(std::ostream& out, const AnalysisResult& result,
                       const TextReportOptions& options) {
  if (result.read.lost_reported > 0) write_lost_events_banner(out, result.read.lost_reported);
  write_log_section(out, result);
  write_trace_section(out, result);
  write_operation_tables(out, result, options.top);
}

}  // namespace sonde::analysis
