#include "analysis/export/trace_tracks.hpp"

#include <algorithm>
#include <limits>

#include "analysis/model/call_tree.hpp"

namespace sonde::analysis {
namespace {

const std::string& host_of(const Execution& e, const Trace& t, std::string& storage) {
  storage.assign(e.host.empty() ? t.host : e.host);
  if (storage.empty()) storage = kUnknownHost;
  return storage;
}

// A time inside `node`'s span where it is the innermost open event on its
// track (strictly between its same-track callees), as close to `target` as
// possible, so a flow event there binds to this node and flows run forward
// in time. Falls back to the node's start when it has no such gap.
int64_t point_inside(const std::vector<TrackNode>& nodes, int32_t node,
                     std::vector<int32_t> callees_on_track, int64_t target) {
  const TrackNode& n = nodes[node];
  std::sort(callees_on_track.begin(), callees_on_track.end(),
            [&](int32_t a, int32_t b) { return nodes[a].start < nodes[b].start; });
  int64_t best = n.start;
  uint64_t best_distance = std::numeric_limits<uint64_t>::max();
  int64_t cursor = n.start;
  const auto consider = [&](int64_t gap_end) {
    if (gap_end - cursor < 2) return;
    const int64_t t = std::clamp(target, cursor + 1, gap_end - 1);
    const uint64_t distance =
        t > target ? static_cast<uint64_t>(t - target) : static_cast<uint64_t>(target - t);
    if (distance < best_distance) {
      best_distance = distance;
      best = t;
    }
  };
  for (int32_t c : callees_on_track) {
    consider(nodes[c].start);
    cursor = std::max(cursor, nodes[c].end);
  }
  consider(n.end);
  return best;
}

// All parts flattened into one caller-before-callee list; `offset[p]` is
// part p's first node.
void flatten(const StitchedTrace& stitched, TraceLayout& layout, std::vector<int32_t>& offset) {
  offset.assign(stitched.parts.size(), 0);
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const SubTrace& part = stitched.parts[p];
    offset[p] = static_cast<int32_t>(layout.nodes.size());
    int32_t part_caller = -1;
    if (part.parent >= 0 && static_cast<size_t>(part.parent) < p && part.parent_execution >= 0 &&
        static_cast<size_t>(part.parent_execution) <
            stitched.parts[part.parent].trace.executions.size()) {
      part_caller = offset[part.parent] + part.parent_execution;
    }
    const CallTree tree = build_call_tree(part.trace);
    for (size_t i = 0; i < part.trace.executions.size(); ++i) {
      TrackNode n;
      n.execution = &part.trace.executions[i];
      n.trace = &part.trace;
      n.part = static_cast<int32_t>(p);
      n.parent = tree.parent[i] >= 0 ? offset[p] + tree.parent[i] : part_caller;
      n.start = n.execution->tin;
      n.end = std::max(n.execution->tout, n.execution->tin);
      layout.nodes.push_back(n);
    }
  }
}

// Tracks: a thread of a host, or a lane for a part without thread id.
void assign_tracks(const StitchedTrace& stitched, const std::vector<int32_t>& offset,
                   TrackAllocator& allocator, TraceLayout& layout) {
  std::vector<TrackNode>& nodes = layout.nodes;
  std::map<std::pair<int32_t, int32_t>, int32_t> track_index;
  std::string host;
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const Trace& trace = stitched.parts[p].trace;
    const int32_t first = offset[p];
    const int32_t last = first + static_cast<int32_t>(trace.executions.size());
    std::vector<int32_t> pid_of(trace.executions.size());
    std::map<int32_t, std::pair<int64_t, int64_t>> span_per_pid;  // for lanes
    for (int32_t n = first; n < last; ++n) {
      const int32_t pid = allocator.pid_for(host_of(*nodes[n].execution, trace, host));
      pid_of[n - first] = pid;
      auto [it, inserted] = span_per_pid.try_emplace(pid, nodes[n].start, nodes[n].end);
      if (!inserted) {
        it->second.first = std::min(it->second.first, nodes[n].start);
        it->second.second = std::max(it->second.second, nodes[n].end);
      }
    }
    std::map<int32_t, int32_t> tid_per_pid;
    for (const auto& [pid, span] : span_per_pid) {
      tid_per_pid[pid] = trace.thread_id >= 0
                             ? allocator.tid_for_thread(pid, trace.thread_id)
                             : allocator.tid_for_lane(pid, span.first, span.second);
    }
    for (int32_t n = first; n < last; ++n) {
      const std::pair key{pid_of[n - first], tid_per_pid[pid_of[n - first]]};
      auto [it, inserted] =
          track_index.try_emplace(key, static_cast<int32_t>(layout.tracks.size()));
      if (inserted) layout.tracks.push_back(TrackId{key.first, key.second});
      nodes[n].track = it->second;
    }
  }
}

// Nearest same-track caller, and each node clamped into its span; `above`
// = nearest caller on another track, which lets the search skip a whole
// run of callers on a foreign track.
void nest(TraceLayout& layout) {
  std::vector<TrackNode>& nodes = layout.nodes;
  std::vector<int32_t> above(nodes.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    TrackNode& node = nodes[n];
    const int32_t parent = node.parent;
    if (parent >= 0) above[n] = nodes[parent].track == node.track ? above[parent] : parent;
    int32_t candidate = parent;
    while (candidate >= 0 && nodes[candidate].track != node.track) candidate = above[candidate];
    node.same_track = candidate;
    if (candidate >= 0) {
      const TrackNode& outer = nodes[candidate];
      const int64_t start = std::clamp(node.start, outer.start, outer.end);
      const int64_t end = std::clamp(node.end, start, outer.end);
      if (start != node.start || end != node.end) {
        node.clamped = true;
        ++layout.clamped;
      }
      node.start = start;
      node.end = end;
    }
  }
  layout.per_track.assign(layout.tracks.size(), {});
  for (size_t n = 0; n < nodes.size(); ++n) layout.per_track[nodes[n].track].push_back(int32_t(n));
  for (std::vector<int32_t>& events : layout.per_track) {
    std::sort(events.begin(), events.end(), [&](int32_t a, int32_t b) {
      // Equal starts: node order is pre-order, so a caller precedes its
      // callees and a zero-length call precedes the sibling that follows it.
      if (nodes[a].start != nodes[b].start) return nodes[a].start < nodes[b].start;
      return a < b;
    });
  }
}

// A flow from each part's parent execution to the part's first execution.
void link_parts(const StitchedTrace& stitched, const std::vector<int32_t>& offset,
                TraceLayout& layout) {
  const std::vector<TrackNode>& nodes = layout.nodes;
  std::map<int32_t, std::vector<int32_t>> callees;  // flow endpoint -> its same-track callees
  std::vector<std::pair<int32_t, int32_t>> links;
  for (size_t p = 1; p < stitched.parts.size(); ++p) {
    const int32_t first = offset[p];
    if (stitched.parts[p].trace.executions.empty() || nodes[first].parent < 0) continue;
    links.emplace_back(nodes[first].parent, first);
    callees[nodes[first].parent];
    callees[first];
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    auto it = callees.find(nodes[n].same_track);
    if (it != callees.end()) it->second.push_back(static_cast<int32_t>(n));
  }
  for (const auto& [from, to] : links) {
    // The start as close as possible to when the part began, the end right after.
    FlowLink link;
    link.from = from;
    link.to = to;
    link.start = point_inside(nodes, from, callees[from], nodes[to].start);
    link.end = point_inside(nodes, to, callees[to], link.start);
    layout.flows.push_back(link);
  }
}

}  // namespace

int32_t TrackAllocator::pid_for(const std::string& host) {
  auto [it, inserted] = pids_.try_emplace(host, static_cast<int32_t>(pids_.size() + 1));
  if (inserted && on_new_process) on_new_process(it->second, host);
  return it->second;
}

int32_t TrackAllocator::new_tid(int32_t pid, const std::string& name) {
  const int32_t tid = next_tid_++;
  ++threads_;
  if (on_new_thread) on_new_thread(pid, tid, name);
  return tid;
}

int32_t TrackAllocator::tid_for_thread(int32_t pid, int64_t thread_id) {
  auto it = thread_tids_.find({pid, thread_id});
  if (it == thread_tids_.end()) {
    const int32_t tid = new_tid(pid, "thread " + std::to_string(thread_id));
    it = thread_tids_.emplace(std::pair{pid, thread_id}, tid).first;
  }
  return it->second;
}

int32_t TrackAllocator::tid_for_lane(int32_t pid, int64_t start, int64_t end) {
  std::vector<Lane>& lanes = lanes_[pid];
  for (Lane& lane : lanes) {
    if (lane.busy_until <= start) {
      lane.busy_until = std::max(lane.busy_until, end);
      return lane.tid;
    }
  }
  const int32_t tid =
      new_tid(pid, "traces without thread id, lane " + std::to_string(lanes.size() + 1));
  lanes.push_back(Lane{tid, end});
  return tid;
}

TraceLayout lay_out_trace(const StitchedTrace& trace, TrackAllocator& tracks, bool flows) {
  TraceLayout layout;
  std::vector<int32_t> offset;
  flatten(trace, layout, offset);
  if (layout.nodes.empty()) return layout;
  assign_tracks(trace, offset, tracks, layout);
  nest(layout);
  if (flows) link_parts(trace, offset, layout);
  return layout;
}

}  // namespace sonde::analysis
