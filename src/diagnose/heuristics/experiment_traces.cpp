#include "diagnose/heuristics/experiment_traces.hpp"

#include <filesystem>
#include <mutex>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "diagnose/heuristics/trace_spans.hpp"
#include "format/log_reader.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class Visit : public analysis::TraceSink {
 public:
  Visit(const Experiment& e, const std::function<void(const analysis::Trace&)>& visit,
        size_t& invalid)
      : e_(e), visit_(visit), invalid_(invalid) {}
  void on_trace(const analysis::Trace& t) override {
    if (e_.end_ns > e_.start_ns && (t.start_time() < e_.start_ns || t.start_time() > e_.end_ns))
      return;
    visit_(t);
  }
  void on_invalid_trace(const analysis::InvalidTrace&) override { ++invalid_; }

 private:
  const Experiment& e_;
  const std::function<void(const analysis::Trace&)>& visit_;
  size_t& invalid_;
};

std::string read_traces(const Experiment& e,
                        const std::function<void(const analysis::Trace&)>& visit, size_t& invalid) {
  const std::filesystem::path log = std::filesystem::path(e.dir) / "log";
  if (!std::filesystem::exists(log)) return log.string() + ": no log directory";
  Visit sink(e, visit, invalid);
  analysis::ReconstructionOptions options;
  // Threads that never leave their outermost monitored function (a queue's
  // consumer loop) leave open traces at the end; they are not requests.
  options.repair_event_traces = false;
  analysis::TraceReconstructor reconstructor(sink, options);
  const format::LogReadStats stats = format::read_log(log.string(), reconstructor);
  reconstructor.finish();
  if (stats.ok) return "";
  return log.string() + ": " + (stats.errors.empty() ? "unreadable" : stats.errors.front());
}

// The spans without reconstructing the traces (trace_spans.hpp); false
// when the log needs a reconstruction to be read right.
bool read_spans(const Experiment& e, ExperimentTraces& out) {
  const std::filesystem::path log = std::filesystem::path(e.dir) / "log";
  if (!std::filesystem::exists(log)) {
    out.error = log.string() + ": no log directory";
    return true;
  }
  const bool phase = e.end_ns > e.start_ns;
  TraceSpanReader reader([&](const TraceSpan& span) {
    if (phase && (span.start < e.start_ns || span.start > e.end_ns)) return;
    out.traces[span.trace_id] = span;
  });
  const format::LogReadStats stats = format::read_log(log.string(), reader);
  if (reader.irregular()) return false;
  out.invalid = reader.unfinished();
  if (!stats.ok)
    out.error = log.string() + ": " + (stats.errors.empty() ? "unreadable" : stats.errors.front());
  return true;
}

}  // namespace

const ExperimentTraces& experiment_traces(const Experiment& e) {
  static std::mutex mutex;
  static std::map<std::string, ExperimentTraces> cache;
  static const bool registered = register_dir_cache(mutex, cache);
  (void)registered;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(e.dir);
  if (it != cache.end()) return it->second;
  ExperimentTraces out;  // built aside: an exception leaves no half-built entry
  if (read_spans(e, out)) return cache.emplace(e.dir, std::move(out)).first->second;
  out = {};
  out.error = read_traces(
      e,
      [&out](const analysis::Trace& t) {  // an id read twice keeps its last trace
        out.traces[t.trace_id] = {t.trace_id,     t.thread_id,  t.parent_trace_id,
                                  t.start_time(), t.end_time(), t.executions.size()};
      },
      out.invalid);
  return cache.emplace(e.dir, std::move(out)).first->second;
}

std::string for_each_trace(const Experiment& e,
                           const std::function<void(const analysis::Trace&)>& visit) {
  size_t invalid = 0;
  return read_traces(e, visit, invalid);
}

}  // namespace sonde::diagnose::heuristics
