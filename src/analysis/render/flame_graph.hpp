// Call stacks of many traces merged into one tree of frames, the model of a
// flame graph: executions reached through the same chain of frame labels
// share a frame, which sums their exclusive ("self") time and counts their
// calls. Memory grows with the number of distinct stacks, not with the
// number of traces.
//
// Output: folded stacks ("main;Catalog.getBook(..);Dao.query(..) 1200", one
// line per stack with self time > 0, value in ns), the input of
// flamegraph.pl, inferno and speedscope; and an SVG (flame_graph_svg.hpp).
// Labels are made safe for that line format: ';' (the frame separator)
// becomes ':', control characters (newlines, tabs, ...) become ' ', and
// bytes that are not UTF-8 become U+FFFD.
//
// Widths: a frame's total is its self time plus its callees' totals, as a
// flame graph draws it. Self time is the execution's exclusive time clamped
// at 0 (clock skew across hosts can make it negative), so totals equal
// inclusive times whenever no exclusive time was negative.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/model/stitched_trace.hpp"

namespace sonde::analysis {

struct FlameGraphOptions {
  // Frame labels: "Catalog.getBook(..)" (short) or the full signature.
  bool short_labels = true;
  // A continued part's stack continues under the execution that handed it
  // the context (like async stack stitching); its time then adds to that
  // frame's width although it may have run in parallel. false: each part is
  // a stack of its own.
  bool graft_continued_parts = true;
  // Keep only time spent in frames whose label or signature contains this
  // text, and in their callees (empty: everything). The callers on the way
  // there stay in the stacks, with no self time.
  std::string focus;
};

struct FlameFrame {
  int32_t parent = -1;     // -1 for the root
  int32_t depth = 0;       // 0 for the root
  int32_t label = -1;      // index into FlameGraph::strings()
  int32_t component = -1;  // index into FlameGraph::strings(); -1 for the root
  uint64_t calls = 0;
  uint64_t failed = 0;            // calls that ended by an exception
  int64_t self = 0;               // ns
  int64_t total = 0;              // ns: self + children's totals
  std::vector<int32_t> children;  // in order of first appearance
};

class FlameGraph : public StitchedTraceSink {
 public:
  explicit FlameGraph(FlameGraphOptions options = {});

  void add(const StitchedTrace& trace);
  void add(const Trace& trace);  // as a one-part stitched trace
  void on_stitched_trace(const StitchedTrace& trace) override { add(trace); }

  // frames()[0] is the root ("all"), whose children are the stack bottoms.
  const std::vector<FlameFrame>& frames() const { return frames_; }
  const std::string& text(int32_t index) const { return strings_[static_cast<size_t>(index)]; }
  const std::string& label(const FlameFrame& frame) const { return text(frame.label); }
  int64_t total() const { return frames_.front().total; }
  uint64_t traces() const { return traces_; }
  const FlameGraphOptions& options() const { return options_; }

  // Folded stacks, children in label order: one "a;b;c <self ns>" line per
  // frame with self time > 0. A line repeats its whole stack, so the output
  // grows with depth squared (a 100,000-deep recursion would be ~45 GB):
  // below `max_depth` frames, the rest of each stack is one frame
  // "[deeper frames folded]" carrying their self time.
  static constexpr size_t kDefaultFoldedDepth = 1024;
  void write_folded(std::ostream& out, size_t max_depth = kDefaultFoldedDepth) const;

 private:
  int32_t intern(const std::string& text);
  int32_t child(int32_t parent, int32_t label, int32_t component);

  FlameGraphOptions options_;
  std::vector<FlameFrame> frames_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int32_t> string_index_;
  // (parent, label, component) -> frame: two free functions of one name in
  // two modules ("init()" of libfoo and of libbar) are two frames.
  struct FrameKey {
    int32_t parent, label, component;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const {
      const uint64_t a = (static_cast<uint64_t>(static_cast<uint32_t>(k.parent)) << 32) |
                         static_cast<uint32_t>(k.label);
      return std::hash<uint64_t>{}(
          a ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.component)) * 0x9E3779B97F4A7C15ull));
    }
  };
  std::unordered_map<FrameKey, int32_t, FrameKeyHash> child_index_;
  uint64_t traces_ = 0;
};

// A label as the folded format can carry it (see above).
std::string folded_frame_label(std::string_view text);

}  // namespace sonde::analysis
