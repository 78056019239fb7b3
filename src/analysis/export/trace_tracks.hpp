// How the exporters that draw traces on per-thread tracks (Chrome Trace
// Event JSON, Perfetto protobuf) lay out a stitched trace:
//
// - Tracks: one process per host (the trace model has no process id), one
//   thread track per recorded thread. Traces without a thread id (Kieker
//   OperationExecutionRecords) go to "lanes": a trace takes the first lane
//   of its host whose previous trace has ended, so concurrent traces never
//   share a track.
// - Nesting: each execution is clamped into its nearest caller on the same
//   track, so nesting is well formed even with equal timestamps or clock
//   skew across hosts; per track, executions are ordered by start, a caller
//   before its callees.
// - Flows: a continued part is linked to the execution that handed its
//   context on, at a time inside each end where it is the innermost event of
//   its track, so a viewer binds the arrow to those two executions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model/stitched_trace.hpp"

namespace sonde::analysis {

// The process name of records and executions that name no host.
inline constexpr const char* kUnknownHost = "[unknown host]";

// One execution of the stitched trace, indexed across all parts in part
// order then eoi order, so a caller always has a smaller index.
struct TrackNode {
  const Execution* execution = nullptr;
  const Trace* trace = nullptr;
  int32_t part = 0;
  int32_t parent = -1;      // caller (in this part, or the parent execution of the part)
  int32_t same_track = -1;  // nearest caller on the same track
  int32_t track = -1;       // index into TraceLayout::tracks
  int64_t start = 0;        // after clamping into same_track's span
  int64_t end = 0;
  bool clamped = false;
};

struct TrackId {
  int32_t pid = 0;
  int32_t tid = 0;
};

struct FlowLink {
  int32_t from = -1, to = -1;  // node indices: the handing execution, the part's first
  int64_t start = 0, end = 0;  // times inside `from` and `to`
};

struct TraceLayout {
  std::vector<TrackNode> nodes;
  std::vector<TrackId> tracks;                  // the tracks this trace uses
  std::vector<std::vector<int32_t>> per_track;  // node indices by start, callers first
  std::vector<FlowLink> flows;
  uint64_t clamped = 0;
};

// Numbers processes (1, 2, ... per host) and threads (from 1000001, so no
// tid equals a pid) across all traces of one output, and says when one is
// first used, so that a writer can name it before its first event.
class TrackAllocator {
 public:
  std::function<void(int32_t pid, const std::string& host)> on_new_process;
  std::function<void(int32_t pid, int32_t tid, const std::string& name)> on_new_thread;

  int32_t pid_for(const std::string& host);
  int32_t tid_for_thread(int32_t pid, int64_t thread_id);
  // The first lane of `pid` free at `start`, busy until `end` from now on.
  int32_t tid_for_lane(int32_t pid, int64_t start, int64_t end);

  uint64_t processes() const { return pids_.size(); }
  uint64_t threads() const { return threads_; }

 private:
  struct Lane {
    int32_t tid;
    int64_t busy_until;
  };
  int32_t new_tid(int32_t pid, const std::string& name);

  int32_t next_tid_ = 1000001;
  uint64_t threads_ = 0;
  std::map<std::string, int32_t> pids_;
  std::map<std::pair<int32_t, int64_t>, int32_t> thread_tids_;
  std::map<int32_t, std::vector<Lane>> lanes_;
};

// Lays out `trace` (see the file comment); `flows`: compute flow links.
TraceLayout lay_out_trace(const StitchedTrace& trace, TrackAllocator& tracks, bool flows);

}  // namespace sonde::analysis
