#include "analysis/chrome_trace_writer.hpp"

#include <algorithm>
#include <limits>

#include "analysis/call_tree.hpp"
#include "analysis/export_support.hpp"

namespace sonde::analysis {
namespace {

constexpr int64_t kHourNs = 3'600'000'000'000;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// Nanoseconds as decimal microseconds with exactly three decimals: exact,
// and short enough for a double to read back to the nanosecond.
std::string micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(magnitude % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return (negative ? "-" : "") + std::to_string(magnitude / 1000) + "." + frac;
}

// One execution of the stitched trace, indexed across all parts in part
// order then eoi order, so a caller always has a smaller index.
struct Node {
  const Execution* execution = nullptr;
  const Trace* trace = nullptr;
  int32_t part = 0;
  int32_t parent = -1;      // caller (in this part, or the parent execution of the part)
  int32_t same_track = -1;  // nearest caller on the same track
  int32_t track = -1;
  int64_t start = 0;  // after clamping into same_track's span
  int64_t end = 0;
  bool clamped = false;
};

const std::string& host_of(const Execution& e, const Trace& t, std::string& storage) {
  storage.assign(e.host.empty() ? t.host : e.host);
  if (storage.empty()) storage = "[unknown host]";
  return storage;
}

// A time inside `node`'s span where it is the innermost open event on its
// track (strictly between its same-track callees), as close to `target` as
// possible, so a flow event there binds to this node and flows run forward
// in time. Falls back to the node's start when it has no such gap.
int64_t point_inside(const std::vector<Node>& nodes, int32_t node,
                     std::vector<int32_t> callees_on_track, int64_t target) {
  const Node& n = nodes[node];
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

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, ChromeTraceOptions options)
    : out_(out), options_(std::move(options)), origin_(options_.time_origin_ns) {}

void ChromeTraceWriter::begin_event() {
  if (!started_) {
    out_ << "{\"traceEvents\":[\n";
    started_ = true;
  }
  if (!first_event_) out_ << ",\n";
  first_event_ = false;
}

void ChromeTraceWriter::write_metadata(const char* name, int32_t pid, int32_t tid,
                                       const std::string& value) {
  begin_event();
  out_ << "{\"name\":\"" << name << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
       << ",\"args\":{\"name\":" << json_quote(value) << "}}";
}

int32_t ChromeTraceWriter::pid_for(const std::string& host) {
  auto [it, inserted] = pids_.try_emplace(host, static_cast<int32_t>(pids_.size() + 1));
  if (inserted) {
    ++stats_.processes;
    write_metadata("process_name", it->second, it->second, host);
  }
  return it->second;
}

int32_t ChromeTraceWriter::new_tid(int32_t pid, const std::string& name) {
  const int32_t tid = next_tid_++;
  ++stats_.threads;
  write_metadata("thread_name", pid, tid, name);
  return tid;
}

int32_t ChromeTraceWriter::tid_for_thread(int32_t pid, int64_t thread_id) {
  auto it = thread_tids_.find({pid, thread_id});
  if (it == thread_tids_.end()) {
    const int32_t tid = new_tid(pid, "thread " + std::to_string(thread_id));
    it = thread_tids_.emplace(std::pair{pid, thread_id}, tid).first;
  }
  return it->second;
}

int32_t ChromeTraceWriter::tid_for_lane(int32_t pid, int64_t start, int64_t end) {
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

void ChromeTraceWriter::on_stitched_trace(const StitchedTrace& stitched) {
  if (finished_ || stitched.parts.empty()) return;
  ++stats_.traces;

  // Flatten all parts into one caller-before-callee list.
  std::vector<Node> nodes;
  std::vector<int32_t> offset(stitched.parts.size());
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const SubTrace& part = stitched.parts[p];
    offset[p] = static_cast<int32_t>(nodes.size());
    int32_t part_caller = -1;
    if (part.parent >= 0 && static_cast<size_t>(part.parent) < p && part.parent_execution >= 0 &&
        static_cast<size_t>(part.parent_execution) <
            stitched.parts[part.parent].trace.executions.size()) {
      part_caller = offset[part.parent] + part.parent_execution;
    }
    const CallTree tree = build_call_tree(part.trace);
    for (size_t i = 0; i < part.trace.executions.size(); ++i) {
      Node n;
      n.execution = &part.trace.executions[i];
      n.trace = &part.trace;
      n.part = static_cast<int32_t>(p);
      n.parent = tree.parent[i] >= 0 ? offset[p] + tree.parent[i] : part_caller;
      n.start = n.execution->tin;
      n.end = std::max(n.execution->tout, n.execution->tin);
      nodes.push_back(n);
    }
  }
  if (nodes.empty()) return;
  if (!origin_) {
    int64_t first = std::numeric_limits<int64_t>::max();
    for (const Node& n : nodes) first = std::min(first, n.start);
    origin_ = floor_div(first, kHourNs) * kHourNs - kHourNs;
  }

  // Tracks: a thread of a host, or a lane for a part without thread id.
  std::map<std::pair<int32_t, int32_t>, int32_t> track_index;
  std::vector<std::pair<int32_t, int32_t>> tracks;  // (pid, tid)
  std::string host;
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const Trace& trace = stitched.parts[p].trace;
    const int32_t first = offset[p];
    const int32_t last = first + static_cast<int32_t>(trace.executions.size());
    std::vector<int32_t> pid_of(trace.executions.size());
    std::map<int32_t, std::pair<int64_t, int64_t>> span_per_pid;  // for lanes
    for (int32_t n = first; n < last; ++n) {
      const int32_t pid = pid_for(host_of(*nodes[n].execution, trace, host));
      pid_of[n - first] = pid;
      auto [it, inserted] = span_per_pid.try_emplace(pid, nodes[n].start, nodes[n].end);
      if (!inserted) {
        it->second.first = std::min(it->second.first, nodes[n].start);
        it->second.second = std::max(it->second.second, nodes[n].end);
      }
    }
    std::map<int32_t, int32_t> tid_per_pid;
    for (const auto& [pid, span] : span_per_pid) {
      tid_per_pid[pid] = trace.thread_id >= 0 ? tid_for_thread(pid, trace.thread_id)
                                              : tid_for_lane(pid, span.first, span.second);
    }
    for (int32_t n = first; n < last; ++n) {
      const std::pair key{pid_of[n - first], tid_per_pid[pid_of[n - first]]};
      auto [it, inserted] = track_index.try_emplace(key, static_cast<int32_t>(tracks.size()));
      if (inserted) tracks.push_back(key);
      nodes[n].track = it->second;
    }
  }

  // Nearest same-track caller; `above` = nearest caller on another track,
  // which lets the search skip a whole run of callers on a foreign track.
  std::vector<int32_t> above(nodes.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    Node& node = nodes[n];
    const int32_t parent = node.parent;
    if (parent >= 0) above[n] = nodes[parent].track == node.track ? above[parent] : parent;
    int32_t candidate = parent;
    while (candidate >= 0 && nodes[candidate].track != node.track) candidate = above[candidate];
    node.same_track = candidate;
    if (candidate >= 0) {
      const Node& outer = nodes[candidate];
      const int64_t start = std::clamp(node.start, outer.start, outer.end);
      const int64_t end = std::clamp(node.end, start, outer.end);
      if (start != node.start || end != node.end) {
        node.clamped = true;
        ++stats_.clamped;
      }
      node.start = start;
      node.end = end;
    }
  }

  // Per track: by start, then callers before callees.
  std::vector<std::vector<int32_t>> per_track(tracks.size());
  for (size_t n = 0; n < nodes.size(); ++n) per_track[nodes[n].track].push_back(int32_t(n));
  for (std::vector<int32_t>& events : per_track) {
    std::sort(events.begin(), events.end(), [&](int32_t a, int32_t b) {
      const Node& x = nodes[a];
      const Node& y = nodes[b];
      // Equal starts: node order is pre-order, so a caller precedes its
      // callees and a zero-length call precedes the sibling that follows it.
      if (x.start != y.start) return x.start < y.start;
      return a < b;
    });
    for (int32_t n : events) {
      const Node& node = nodes[n];
      const Execution& e = *node.execution;
      begin_event();
      out_ << "{\"name\":" << json_quote(execution_label(e, options_.short_labels))
           << ",\"cat\":\"sonde\",\"ph\":\"X\",\"ts\":" << micros(node.start - *origin_)
           << ",\"dur\":" << micros(node.end - node.start)
           << ",\"pid\":" << tracks[node.track].first << ",\"tid\":" << tracks[node.track].second
           << ",\"args\":{\"trace_id\":\"" << node.trace->trace_id << "\",\"eoi\":" << e.eoi
           << ",\"ess\":" << e.ess << ",\"operation\":" << json_quote(e.operation)
           << ",\"component\":" << json_quote(e.component);
      if (stitched.parts.size() > 1) out_ << ",\"part\":" << node.part;
      if (!node.trace->session.empty()) out_ << ",\"session\":" << json_quote(node.trace->session);
      if (e.failed) out_ << ",\"failed\":true,\"cause\":" << json_quote(e.cause);
      if (e.repaired) out_ << ",\"repaired\":true";
      if (node.clamped) out_ << ",\"clamped\":true";
      out_ << "}}";
      ++stats_.complete_events;
    }
  }

  if (!options_.flows) return;
  // Flow from each part's parent execution to the part's first execution.
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
    const int64_t start = point_inside(nodes, from, callees[from], nodes[to].start);
    const int64_t end = point_inside(nodes, to, callees[to], start);
    write_flow_event('s', next_flow_id_, start, tracks[nodes[from].track]);
    write_flow_event('f', next_flow_id_, end, tracks[nodes[to].track]);
    ++next_flow_id_;
    ++stats_.flows;
  }
}

void ChromeTraceWriter::write_flow_event(char phase, uint64_t id, int64_t time,
                                         std::pair<int32_t, int32_t> track) {
  begin_event();
  out_ << "{\"name\":\"context\",\"cat\":\"sonde.flow\",\"ph\":\"" << phase << "\",\"id\":" << id
       << ",\"ts\":" << micros(time - *origin_) << ",\"pid\":" << track.first
       << ",\"tid\":" << track.second << (phase == 'f' ? ",\"bp\":\"e\"}" : "}");
}

void ChromeTraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (!started_) out_ << "{\"traceEvents\":[\n";
  out_ << "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"sonde\""
       << ",\"time_origin_ns\":\"" << origin_.value_or(0) << "\",\"traces\":\"" << stats_.traces
       << "\"}}\n";
  out_.flush();
}

}  // namespace sonde::analysis
