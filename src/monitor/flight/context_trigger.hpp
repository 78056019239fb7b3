// The flight recorder's context trigger (config flight_context_model,
// docs/flight-recorder.md): every trace that ends on a thread is scored
// against a calling-context model saved by `sonde context --save-model`.
// Each execution's trace context (its call tree's shape and its position
// in it, format/context_key.hpp) names the model entity it is tested in,
// and the execution's score is the one `sonde context --anomalies` lists
// (format/context_fences.hpp). A trace with an execution scoring above
// flight_context_score asks for a snapshot: slow *for its context*, where
// a fixed threshold (flight_slow_trace_ms) would fire on contexts that are
// always slow and miss fast ones that became slow.
//
// A trace here is one root call of a thread (what the writer makes a trace
// of when nothing else starts one). Traces whose shape the model never saw
// cannot be scored; they are counted, as are traces too big to follow.
// Runs on the writer thread only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/context_fences.hpp"
#include "monitor/raw_event.hpp"

namespace sonde::monitor {
class WriterCore;
}

namespace sonde::monitor::flight {

struct ContextTriggerStats {
  uint64_t scored = 0;     // traces whose every context the model knows
  uint64_t unknown = 0;    // traces with a context the model never saw
  uint64_t too_large = 0;  // traces of more than kMaxExecutions calls
  uint64_t damaged = 0;    // traces that lost events (their shape is unknown)
  uint64_t anomalies = 0;  // scored traces with an execution over the score
};

class ContextTrigger {
 public:
  static constexpr size_t kMaxExecutions = 65536;
  static constexpr size_t kKeptCapacity = 4096;  // per thread, between traces

  // Reads the model; "" or the problem.
  std::string load(const std::string& path, double threshold, double min_excess_ns);
  bool active() const { return active_; }

  // One thread's calls as they arrive.
  struct Stream {
    std::vector<uint64_t> ops;      // operation key per pre-order position
    std::vector<int32_t> parent;    // parent position, -1 for the root
    std::vector<uint64_t> start;    // enter time, raw ticks
    std::vector<uint64_t> elapsed;  // exit - enter, raw ticks
    std::vector<int32_t> open;      // positions entered and not yet left
    uint32_t depth = 0;             // frames open, recorded or not
    bool skip = false;              // too large, or lost events: not scored
  };
  // An enter or an exit (kEnterFn/kEnterOp, kExitFn/kExitOp/kFailFn/kFailOp).
  // Returns true when it ended a trace that scored above the threshold;
  // describe() then says which execution.
  bool on_event(Stream& st, const RawEvent& e, WriterCore& core, double ns_per_tick);
  const std::string& describe() const { return last_; }
  const ContextTriggerStats& stats() const { return stats_; }

 private:
  uint64_t operation_key(uint64_t word, WriterCore& core);
  bool finish(const Stream& st, double ns_per_tick);

  bool active_ = false;
  double threshold_ = 3;
  double min_excess_ns_ = 0;
  format::ContextFences fences_;
  std::unordered_map<uint64_t, uint64_t> op_keys_;      // enter word -> operation key
  std::unordered_map<uint64_t, std::string> op_names_;  // operation key -> signature
  ContextTriggerStats stats_;
  std::string last_;
};

}  // namespace sonde::monitor::flight
