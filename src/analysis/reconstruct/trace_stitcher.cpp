#include "analysis/reconstruct/trace_stitcher.hpp"

#include <algorithm>

#include "analysis/model/execution_lookup.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::analysis {
namespace {

// A root trace names itself (Kieker's convention) or nothing as its parent.
bool is_root(const Trace& t) { return t.parent_trace_id < 0 || t.parent_trace_id == t.trace_id; }

// The execution of `t` whose W3C span id is `span` (format/w3c_ids.hpp),
// whether `t` is its trace's owner or a continued part; -1 if none.
int32_t execution_with_span(const Trace& t, uint64_t span) {
  for (size_t i = 0; i < t.executions.size(); ++i) {
    const Execution& e = t.executions[i];
    if (e.order_index < 0) continue;
    const auto position = static_cast<uint32_t>(e.order_index);
    const auto part = static_cast<uint64_t>(t.trace_id);
    if (format::w3c::span_id(true, part, position) == span ||
        format::w3c::span_id(false, part, position) == span) {
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

}  // namespace

TraceStitcher::TraceStitcher(StitchedTraceSink& sink, StitchingOptions options,
                             TraceSink* invalid_sink)
    : sink_(sink), options_(options), invalid_sink_(invalid_sink) {}

void TraceStitcher::on_trace(const Trace& trace) {
  ++stats_.traces;
  const int64_t exit_time = trace.end_time();
  clock_ = std::max(clock_, exit_time);

  const bool duplicate = group_of_trace_.count(trace.trace_id) != 0;
  if (duplicate) ++stats_.duplicate_trace_ids;
  const uint64_t id = new_group(trace, exit_time);
  // Children that arrived first now find their parent; a duplicate id gets
  // none (they are already with the first trace of that id, or waiting).
  if (!duplicate) adopt_waiting_children(id, trace.trace_id);
  attach_to_parent(id);

  emit_expired();
  while (options_.max_open_groups != 0 && groups_.size() > options_.max_open_groups) {
    emit(by_newest_exit_.begin()->second, Emit::kEvicted);
  }
  stats_.peak_open_groups = std::max(stats_.peak_open_groups, groups_.size());
}

void TraceStitcher::on_invalid_trace(const InvalidTrace& trace) {
  ++stats_.invalid_traces;
  if (invalid_sink_ != nullptr) invalid_sink_->on_invalid_trace(trace);
  // Its children can no longer find it: they stop waiting and stay roots.
  auto waiting = waiting_.find(trace.trace_id);
  if (waiting != waiting_.end()) {
    for (uint64_t g : waiting->second) groups_.at(g).waiting_for = kNoParent;
    waiting_.erase(waiting);
  }
  remember_handed_on(trace.trace_id);
}

void TraceStitcher::finish() {
  std::vector<uint64_t> order;
  order.reserve(groups_.size());
  for (const auto& [id, group] : groups_) order.push_back(id);
  // Deterministic output: oldest root first, then by trace id.
  std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) {
    const Trace& ra = groups_.at(a).parts.front();
    const Trace& rb = groups_.at(b).parts.front();
    const int64_t sa = ra.start_time();
    const int64_t sb = rb.start_time();
    return sa != sb ? sa < sb : ra.trace_id < rb.trace_id;
  });
  for (uint64_t id : order) emit(id, Emit::kEndOfInput);
}

uint64_t TraceStitcher::new_group(const Trace& trace, int64_t exit_time) {
  const uint64_t id = next_group_id_++;
  Group& g = groups_[id];
  g.parts.push_back(trace);
  g.parent.push_back(-1);
  g.newest_exit = exit_time;
  by_newest_exit_.emplace(exit_time, id);
  group_of_trace_.emplace(trace.trace_id, id);  // keeps the first of duplicate ids
  return id;
}

void TraceStitcher::adopt_waiting_children(uint64_t group_id, int64_t trace_id) {
  auto waiting = waiting_.find(trace_id);
  if (waiting == waiting_.end()) return;
  std::vector<uint64_t> children = std::move(waiting->second);
  waiting_.erase(waiting);
  for (uint64_t child : children) {
    groups_.at(child).waiting_for = kNoParent;
    merge_into(child, group_id, 0);
  }
}

void TraceStitcher::attach_to_parent(uint64_t group_id) {
  const Trace& root = groups_.at(group_id).parts.front();
  if (is_root(root)) return;
  const int64_t parent_id = root.parent_trace_id;
  auto known = group_of_trace_.find(parent_id);
  if (known != group_of_trace_.end()) {
    if (known->second == group_id) {
      // The parent is among this trace's own descendants: a cycle.
      ++stats_.cyclic_links;
      return;
    }
    const Group& parent_group = groups_.at(known->second);
    int32_t parent_part = 0;
    while (parent_group.parts[static_cast<size_t>(parent_part)].trace_id != parent_id) {
      ++parent_part;
    }
    merge_into(group_id, known->second, parent_part);
    return;
  }
  if (handed_on_.count(parent_id) != 0) {
    ++stats_.late_children;  // stays a root: an orphan when handed on
    return;
  }
  groups_.at(group_id).waiting_for = parent_id;
  waiting_[parent_id].push_back(group_id);
}

void TraceStitcher::merge_into(uint64_t child_group_id, uint64_t parent_group_id,
                               int32_t parent_part) {
  Group& child = groups_.at(child_group_id);
  Group& parent = groups_.at(parent_group_id);
  const int32_t offset = static_cast<int32_t>(parent.parts.size());
  for (size_t i = 0; i < child.parts.size(); ++i) {
    auto known = group_of_trace_.find(child.parts[i].trace_id);
    if (known != group_of_trace_.end() && known->second == child_group_id) {
      known->second = parent_group_id;
    }
    parent.parts.push_back(std::move(child.parts[i]));
    parent.parent.push_back(i == 0 ? parent_part : child.parent[i] + offset);
  }
  const int64_t child_exit = child.newest_exit;
  by_newest_exit_.erase({child.newest_exit, child_group_id});
  groups_.erase(child_group_id);
  touch(parent_group_id, child_exit);
}

void TraceStitcher::touch(uint64_t group_id, int64_t exit_time) {
  Group& g = groups_.at(group_id);
  if (exit_time <= g.newest_exit) return;
  by_newest_exit_.erase({g.newest_exit, group_id});
  g.newest_exit = exit_time;
  by_newest_exit_.emplace(exit_time, group_id);
}

void TraceStitcher::stop_waiting(uint64_t group_id) {
  Group& g = groups_.at(group_id);
  if (g.waiting_for == kNoParent) return;
  auto waiting = waiting_.find(g.waiting_for);
  if (waiting != waiting_.end()) {
    std::erase(waiting->second, group_id);
    if (waiting->second.empty()) waiting_.erase(waiting);
  }
  g.waiting_for = kNoParent;
}

void TraceStitcher::emit_expired() {
  if (options_.child_timeout_ns <= 0) return;
  while (!by_newest_exit_.empty()) {
    const auto [newest_exit, id] = *by_newest_exit_.begin();
    // Written so that it cannot overflow: both are log times.
    if (clock_ - newest_exit <= options_.child_timeout_ns) break;
    emit(id, Emit::kTimeout);
  }
}

void TraceStitcher::emit(uint64_t group_id, Emit why) {
  stop_waiting(group_id);
  Group& g = groups_.at(group_id);
  switch (why) {
    case Emit::kTimeout:
      ++stats_.timed_out_groups;
      break;
    case Emit::kEvicted:
      ++stats_.evicted_groups;
      break;
    case Emit::kEndOfInput:
      break;
  }

  // Parents before children; siblings in start order, then by trace id.
  const size_t n = g.parts.size();
  std::vector<std::vector<int32_t>> children(n);
  for (size_t i = 1; i < n; ++i) {
    children[static_cast<size_t>(g.parent[i])].push_back(static_cast<int32_t>(i));
  }
  std::vector<int64_t> start(n);
  for (size_t i = 0; i < n; ++i) start[i] = g.parts[i].start_time();
  StitchedTrace out;
  out.parts.reserve(n);
  std::vector<int32_t> position(n, -1);  // group index -> index in out.parts
  std::vector<int32_t> queue = {0};
  for (size_t head = 0; head < queue.size(); ++head) {
    const int32_t part = queue[head];
    position[static_cast<size_t>(part)] = static_cast<int32_t>(out.parts.size());
    SubTrace sub;
    sub.trace = std::move(g.parts[static_cast<size_t>(part)]);
    if (part != 0) {
      const int32_t parent = g.parent[static_cast<size_t>(part)];
      sub.parent = position[static_cast<size_t>(parent)];
      const Trace& parent_trace = out.parts[static_cast<size_t>(sub.parent)].trace;
      sub.parent_execution =
          ExecutionLookup(parent_trace).current_at_order_index(sub.trace.parent_order_id);
      if (sub.parent_execution < 0 && sub.trace.parent_order_id < 0 &&
          sub.trace.w3c.parent_span_id != 0) {
        // Continued from a traceparent a continued part sent: no position,
        // but the span id of the execution that sent it.
        sub.parent_execution = execution_with_span(parent_trace, sub.trace.w3c.parent_span_id);
      }
      if (sub.parent_execution < 0 && sub.trace.parent_order_id >= 0) {
        ++stats_.unresolved_parent_positions;
      }
      ++stats_.parts_stitched;
    }
    out.parts.push_back(std::move(sub));
    std::vector<int32_t>& kids = children[static_cast<size_t>(part)];
    std::sort(kids.begin(), kids.end(), [&](int32_t a, int32_t b) {
      const size_t ia = static_cast<size_t>(a);
      const size_t ib = static_cast<size_t>(b);
      return start[ia] != start[ib] ? start[ia] < start[ib] : ia < ib;  // then arrival order
    });
    queue.insert(queue.end(), kids.begin(), kids.end());
  }
  if (!is_root(out.parts.front().trace)) ++stats_.orphans;
  ++stats_.groups;

  for (const SubTrace& part : out.parts) {
    auto known = group_of_trace_.find(part.trace.trace_id);
    if (known != group_of_trace_.end() && known->second == group_id) group_of_trace_.erase(known);
    remember_handed_on(part.trace.trace_id);
  }
  by_newest_exit_.erase({g.newest_exit, group_id});
  groups_.erase(group_id);
  sink_.on_stitched_trace(out);
}

void TraceStitcher::remember_handed_on(int64_t trace_id) {
  if (options_.remembered_trace_ids == 0) return;
  if (!handed_on_.insert(trace_id).second) return;
  handed_on_order_.push_back(trace_id);
  if (handed_on_order_.size() > options_.remembered_trace_ids) {
    handed_on_.erase(handed_on_order_.front());
    handed_on_order_.pop_front();
  }
}

}  // namespace sonde::analysis
