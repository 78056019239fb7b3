// Stitches traces that continued another trace's context (TraceMetadata
// parentTraceId / parentOrderId: sonde::Context across threads, a W3C
// traceparent across processes) into one StitchedTrace per request.
//
// Streaming with bounded memory. A trace arrives when the reconstructor
// closes it, children often before their parent (a helper thread finishes
// first). Traces linked by parent ids are kept together in an open group; a
// group is handed on when
//   - the log clock (the newest exit time seen) has passed the group's
//     newest exit by `child_timeout_ns`: no child can be expected any more;
//   - more than `max_open_groups` are open: the least recently extended
//     group goes (counted as evicted);
//   - finish() is called at the end of input.
// A trace whose parent never arrives becomes the root of its group (an
// orphan: its root part keeps parentTraceId != traceId). A child arriving
// after its parent's group was handed on becomes such an orphan too
// (counted as late). Links that would close a cycle are ignored.
//
// Invalid traces (InvalidTrace) are not stitched: their partial executions
// may lack exits, which no exporter can write. They are counted and passed
// through to the optional `invalid_sink`; a child of an invalid trace is
// stitched as an orphan root.
//
// Traces are copied into the groups; their string views point into the
// reconstructor's string pool, which must outlive the stitcher's output.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/model/stitched_trace.hpp"
#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct StitchingOptions {
  // Log time (ns) a group waits after its newest exit for further children;
  // 0 = wait until finish() (memory then bounded by max_open_groups only).
  int64_t child_timeout_ns = 10'000'000'000;
  // Bound on groups open at once; 0 = unbounded.
  size_t max_open_groups = 100'000;
  // How many handed-on trace ids are remembered to tell a late child from
  // an orphan.
  size_t remembered_trace_ids = 65'536;
};

struct StitchingStats {
  uint64_t traces = 0;               // valid traces received
  uint64_t invalid_traces = 0;       // not stitched (passed to the invalid sink, if any)
  uint64_t groups = 0;               // StitchedTraces handed on
  uint64_t parts_stitched = 0;       // parts attached below a parent part
  uint64_t orphans = 0;              // groups whose root names a parent that was not stitched
  uint64_t late_children = 0;        // of those: the parent had already been handed on
  uint64_t timed_out_groups = 0;     // handed on by child_timeout_ns (the normal way)
  uint64_t evicted_groups = 0;       // handed on early because of max_open_groups
  uint64_t cyclic_links = 0;         // parent links ignored because they would close a cycle
  uint64_t duplicate_trace_ids = 0;  // a trace id already open: the later trace gets no children
  uint64_t unresolved_parent_positions = 0;  // parentOrderId naming no execution of the parent
  size_t peak_open_groups = 0;
};

class TraceStitcher : public TraceSink {
 public:
  explicit TraceStitcher(StitchedTraceSink& sink, StitchingOptions options = {},
                         TraceSink* invalid_sink = nullptr);

  void on_trace(const Trace& trace) override;
  void on_invalid_trace(const InvalidTrace& trace) override;

  // End of input: hands on every open group, oldest root first. Call once,
  // after the reconstructor's finish().
  void finish();

  const StitchingStats& stats() const { return stats_; }
  size_t open_groups() const { return groups_.size(); }

 private:
  static constexpr int64_t kNoParent = INT64_MIN;

  struct Group {
    std::vector<Trace> parts;         // parts[0] is the group's root
    std::vector<int32_t> parent;      // per part: index of its parent part, -1 for parts[0]
    int64_t newest_exit = 0;          // log time of the group's latest exit
    int64_t waiting_for = kNoParent;  // parent id the root waits for
  };
  enum class Emit : uint8_t { kTimeout, kEvicted, kEndOfInput };

  uint64_t new_group(const Trace& trace, int64_t exit_time);
  void adopt_waiting_children(uint64_t group_id, int64_t trace_id);
  void attach_to_parent(uint64_t group_id);
  void merge_into(uint64_t child_group_id, uint64_t parent_group_id, int32_t parent_part);
  void touch(uint64_t group_id, int64_t exit_time);
  void stop_waiting(uint64_t group_id);
  void emit_expired();
  void emit(uint64_t group_id, Emit why);
  void remember_handed_on(int64_t trace_id);

  StitchedTraceSink& sink_;
  StitchingOptions options_;
  TraceSink* invalid_sink_;
  StitchingStats stats_;
  uint64_t next_group_id_ = 0;
  std::unordered_map<uint64_t, Group> groups_;
  std::unordered_map<int64_t, uint64_t> group_of_trace_;        // open trace id -> group
  std::unordered_map<int64_t, std::vector<uint64_t>> waiting_;  // parent id -> groups
  std::set<std::pair<int64_t, uint64_t>> by_newest_exit_;       // expiry order
  int64_t clock_ = INT64_MIN;                                   // newest exit seen (log time)
  std::deque<int64_t> handed_on_order_;
  std::unordered_set<int64_t> handed_on_;
};

}  // namespace sonde::analysis
