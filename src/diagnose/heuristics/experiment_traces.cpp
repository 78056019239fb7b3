#include "diagnose/heuristics/experiment_traces.hpp"

#include <filesystem>
#include <mutex>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/log_reader.hpp"

namespace sonde::diagnose::heuristics {
namespace {

class Collect : public analysis::TraceSink {
 public:
  Collect(const Experiment& e, ExperimentTraces& out) : e_(e), out_(out) {}
  void on_trace(const analysis::Trace& t) override {
    if (e_.end_ns > e_.start_ns && (t.start_time() < e_.start_ns || t.start_time() > e_.end_ns))
      return;
    out_.traces[t.trace_id] = t;
  }
  void on_invalid_trace(const analysis::InvalidTrace&) override { ++out_.invalid; }

 private:
  const Experiment& e_;
  ExperimentTraces& out_;
};

}  // namespace

const ExperimentTraces& experiment_traces(const Experiment& e) {
  static std::mutex mutex;
  static std::map<std::string, ExperimentTraces> cache;
  static const bool registered = register_dir_cache(mutex, cache);
  (void)registered;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(e.dir);
  if (it != cache.end()) return it->second;
  ExperimentTraces& out = cache[e.dir];
  out.strings = std::make_shared<format::StringPool>();
  const std::filesystem::path log = std::filesystem::path(e.dir) / "log";
  if (!std::filesystem::exists(log)) {
    out.error = log.string() + ": no log directory";
    return out;
  }
  Collect collect(e, out);
  analysis::ReconstructionOptions options;
  // Threads that never leave their outermost monitored function (a queue's
  // consumer loop) leave open traces at the end; they are not requests.
  options.repair_event_traces = false;
  analysis::TraceReconstructor reconstructor(collect, options, out.strings);
  const format::LogReadStats stats = format::read_log(log.string(), reconstructor);
  reconstructor.finish();
  if (!stats.ok)
    out.error = log.string() + ": " + (stats.errors.empty() ? "unreadable" : stats.errors.front());
  return out;
}

}  // namespace sonde::diagnose::heuristics
