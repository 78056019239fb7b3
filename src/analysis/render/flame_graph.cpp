#include "analysis/render/flame_graph.hpp"

#include <algorithm>

#include "analysis/export/export_support.hpp"
#include "analysis/model/call_tree.hpp"
#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {

std::string folded_frame_label(std::string_view text) {
  std::string out = to_valid_utf8(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ';') c = ':';
    if (u < 0x20 || u == 0x7F) c = ' ';
  }
  return out;
}

FlameGraph::FlameGraph(FlameGraphOptions options) : options_(std::move(options)) {
  FlameFrame root;
  root.label = intern("all");
  frames_.push_back(root);
}

int32_t FlameGraph::intern(const std::string& text) {
  auto [it, inserted] = string_index_.try_emplace(text, static_cast<int32_t>(strings_.size()));
  if (inserted) strings_.push_back(text);
  return it->second;
}

int32_t FlameGraph::child(int32_t parent, int32_t label, int32_t component) {
  auto [it, inserted] = child_index_.try_emplace(FrameKey{parent, label, component},
                                                 static_cast<int32_t>(frames_.size()));
  if (inserted) {
    FlameFrame frame;
    frame.parent = parent;
    frame.depth = frames_[parent].depth + 1;
    frame.label = label;
    frame.component = component;
    frames_.push_back(std::move(frame));
    frames_[parent].children.push_back(it->second);
  }
  return it->second;
}

void FlameGraph::add(const Trace& trace) { add(one_part_stitched_trace(trace)); }

void FlameGraph::add(const StitchedTrace& stitched) {
  ++traces_;
  // All parts flattened, callers before callees; caller = -1 for a stack bottom.
  struct Item {
    const Execution* execution;
    int32_t caller;
    int64_t self;
  };
  std::vector<Item> items;
  std::vector<int32_t> offset(stitched.parts.size());
  for (size_t p = 0; p < stitched.parts.size(); ++p) {
    const SubTrace& part = stitched.parts[p];
    offset[p] = static_cast<int32_t>(items.size());
    int32_t part_caller = -1;
    if (options_.graft_continued_parts && part.parent >= 0 &&
        static_cast<size_t>(part.parent) < p && part.parent_execution >= 0 &&
        static_cast<size_t>(part.parent_execution) <
            stitched.parts[part.parent].trace.executions.size()) {
      part_caller = offset[part.parent] + part.parent_execution;
    }
    const CallTree tree = build_call_tree(part.trace);
    const std::vector<int64_t> exclusive = exclusive_durations(part.trace, tree);
    for (size_t i = 0; i < part.trace.executions.size(); ++i) {
      const int32_t caller = tree.parent[i] >= 0 ? offset[p] + tree.parent[i] : part_caller;
      items.push_back(Item{&part.trace.executions[i], caller, std::max<int64_t>(exclusive[i], 0)});
    }
  }

  // Focus: `counted` = inside a matching frame; `needed` = counted or on
  // the way to one.
  const size_t n = items.size();
  std::vector<char> counted(n, 1);
  std::vector<char> needed(n, 1);
  if (!options_.focus.empty()) {
    for (size_t i = 0; i < n; ++i) {
      const Execution& e = *items[i].execution;
      const bool match =
          execution_label(e, options_.short_labels).find(options_.focus) != std::string::npos ||
          e.operation.find(options_.focus) != std::string_view::npos;
      counted[i] = match || (items[i].caller >= 0 && counted[items[i].caller]);
      needed[i] = counted[i];
    }
    for (size_t i = n; i-- > 0;) {
      if (needed[i] && items[i].caller >= 0) needed[items[i].caller] = 1;
    }
  }

  std::vector<int32_t> frame_of(n, 0);
  std::vector<int64_t> total(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    const Execution& e = *items[i].execution;
    const int32_t parent = items[i].caller >= 0 ? frame_of[items[i].caller] : 0;
    const std::string label = folded_frame_label(execution_label(e, options_.short_labels));
    const std::string component = folded_frame_label(e.component.empty() ? label : e.component);
    frame_of[i] = child(parent, intern(label), intern(component));
    FlameFrame& frame = frames_[frame_of[i]];
    ++frame.calls;
    if (e.failed) ++frame.failed;
    if (counted[i]) {
      frame.self += items[i].self;
      total[i] = items[i].self;
    }
  }
  // Totals bottom-up: a callee always comes after its caller.
  for (size_t i = n; i-- > 0;) {
    if (!needed[i]) continue;
    frames_[frame_of[i]].total += total[i];
    if (items[i].caller >= 0) {
      total[items[i].caller] += total[i];
    } else {
      frames_.front().total += total[i];
    }
  }
}

void FlameGraph::write_folded(std::ostream& out, size_t max_depth) const {
  // Depth-first with an explicit stack: stacks can be 100,000 frames deep.
  std::vector<std::vector<int32_t>> sorted(frames_.size());
  for (size_t f = 0; f < frames_.size(); ++f) {
    sorted[f] = frames_[f].children;
    std::sort(sorted[f].begin(), sorted[f].end(),
              [&](int32_t a, int32_t b) { return label(frames_[a]) < label(frames_[b]); });
  }
  std::vector<std::pair<int32_t, size_t>> stack{{0, 0}};  // frame, next child
  std::string line;
  std::vector<size_t> line_length{0};
  while (!stack.empty()) {
    auto& [frame, next] = stack.back();
    if (next == sorted[frame].size()) {
      stack.pop_back();
      line_length.pop_back();
      continue;
    }
    const int32_t c = sorted[frame][next++];
    line.resize(line_length.back());
    if (!line.empty()) line += ';';
    line += label(frames_[c]);
    const FlameFrame& f = frames_[c];
    if (f.self > 0) out << line << ' ' << f.self << '\n';
    if (stack.size() >= max_depth) {  // c is at depth max_depth: fold what lies below
      if (f.total > f.self) out << line << ";[deeper frames folded] " << f.total - f.self << '\n';
      continue;
    }
    line_length.push_back(line.size());
    stack.emplace_back(c, 0);
  }
}

}  // namespace sonde::analysis
