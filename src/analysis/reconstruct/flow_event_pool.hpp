// Event vectors reused from trace to trace instead of allocated, grown and
// freed for each. Small ones for every new trace; large ones, within a
// byte budget, for a trace that outgrows its vector: a program whose
// requests call a tiny function 50,000 times has traces of 10^5-10^6
// events (10-100 MB), and growing a fresh vector for each (a chain of
// copies into newly mapped pages, glibc maps blocks over 32 MB anew each
// time) was four fifths of reading such a log (scenario t03, 2026-12-05:
// `sonde summary` of its 113 M-record single-user log 45 s, 20 s with a
// 1 GB budget, 17.6 s with 2 GB; peak memory 0.87, 1.16 and 1.22 GB).
// The budget is memory a long-running reader (the collector) keeps after
// a burst of such traces.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "analysis/reconstruct/event_trace_buffer.hpp"

namespace sonde::analysis {

class FlowEventPool {
 public:
  static constexpr size_t kSmallCapacity = 256;  // events
  static constexpr size_t kSmallSpares = 64;
  static constexpr size_t kLargeSpareBytes = size_t{1} << 30;  // all large spares together

  // For a new trace: a small spare (empty if none).
  std::vector<FlowEvent> take_small();
  // A closed trace's vector (its contents are dropped).
  void give(std::vector<FlowEvent> v);
  // `v` is full: moves its events into the largest spare, if that holds
  // twice as many, and gives `v` back; else grows `v` as usual.
  void grow(std::vector<FlowEvent>& v);

 private:
  std::vector<std::vector<FlowEvent>> small_;
  std::multimap<size_t, std::vector<FlowEvent>> large_;  // by capacity
  size_t large_bytes_ = 0;
};

}  // namespace sonde::analysis
