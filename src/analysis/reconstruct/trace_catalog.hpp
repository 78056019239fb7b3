// A bounded catalogue of the traces in a log: one line per trace (id, root
// operation, host, thread, start, duration, executions, failures, validity),
// filtered and ranked while streaming so memory holds at most `limit`
// entries however many traces the log has. Backs `sonde traces` and the
// trace search of the web UI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct TraceEntry {
  int64_t trace_id = -1;
  std::string root_operation;  // operation of the execution with eoi 0 ("" if none)
  std::string host;
  int64_t thread_id = -1;
  int64_t parent_trace_id = -1;
  int64_t start = 0;     // ns since the epoch
  int64_t duration = 0;  // ns
  uint32_t executions = 0;
  uint32_t failed = 0;  // executions left by an exception
  bool valid = true;
  std::string problem;  // the main reason, for an invalid trace
};

enum class TraceOrder : uint8_t { kStart, kLongest };

struct TraceFilter {
  std::string operation;         // substring of the root operation; "" = any
  std::string host;              // exact host; "" = any
  int64_t min_duration = 0;      // ns
  int64_t max_duration = -1;     // ns; -1 = no bound
  bool only_failed = false;      // at least one failed execution
  bool include_invalid = false;  // also list invalid traces (with their reason)
  bool only_invalid = false;
};

class TraceCatalog : public TraceSink {
 public:
  TraceCatalog(TraceFilter filter, TraceOrder order, size_t limit);

  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;

  // The selected entries: earliest first (kStart) or longest first (kLongest).
  std::vector<TraceEntry> entries() const;
  // Traces that passed the filter (may exceed the entries kept).
  uint64_t matched() const { return matched_; }

 private:
  void offer(const Trace& trace, bool valid, const std::string& problem);
  bool ranks_before(const TraceEntry& a, const TraceEntry& b) const;

  TraceFilter filter_;
  TraceOrder order_;
  size_t limit_;
  uint64_t matched_ = 0;
  // A heap whose top is the entry that drops out first when a better one comes.
  std::vector<TraceEntry> heap_;
};

// The root operation of a trace: eoi 0's operation, or "" for an empty trace.
std::string_view root_operation(const Trace& trace);

}  // namespace sonde::analysis
