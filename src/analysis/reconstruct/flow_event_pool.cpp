#include "analysis/reconstruct/flow_event_pool.hpp"

#include <iterator>
#include <utility>

namespace sonde::analysis {

std::vector<FlowEvent> FlowEventPool::take_small() {
  if (small_.empty()) return {};
  std::vector<FlowEvent> v = std::move(small_.back());
  small_.pop_back();
  return v;
}

void FlowEventPool::give(std::vector<FlowEvent> v) {
  v.clear();
  if (v.capacity() <= kSmallCapacity) {
    if (small_.size() < kSmallSpares) small_.push_back(std::move(v));
    return;
  }
  const size_t bytes = v.capacity() * sizeof(FlowEvent);
  // Over budget: make room by dropping smaller spares, if that is enough.
  while (large_bytes_ + bytes > kLargeSpareBytes && !large_.empty() &&
         large_.begin()->first < v.capacity()) {
    large_bytes_ -= large_.begin()->first * sizeof(FlowEvent);
    large_.erase(large_.begin());
  }
  if (large_bytes_ + bytes > kLargeSpareBytes) return;
  large_bytes_ += bytes;
  large_.emplace(v.capacity(), std::move(v));
}

void FlowEventPool::grow(std::vector<FlowEvent>& v) {
  // The largest spare: a trace that outgrows a small vector is likely to be
  // one of the program's large ones, and each step copies what it holds.
  if (large_.empty() || std::prev(large_.end())->first < 2 * v.size()) {
    v.reserve(2 * v.capacity());
    return;
  }
  auto it = std::prev(large_.end());
  std::vector<FlowEvent> larger = std::move(it->second);
  large_bytes_ -= it->first * sizeof(FlowEvent);
  large_.erase(it);
  larger.assign(v.begin(), v.end());
  std::swap(v, larger);
  give(std::move(larger));
}

}  // namespace sonde::analysis
