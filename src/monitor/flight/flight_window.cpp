#include "monitor/flight/flight_window.hpp"

namespace sonde::monitor::flight {

bool has_time(const RawEvent& e) {
  switch (kind_of(e.b)) {
    case RawKind::kEnterFn:
    case RawKind::kExitFn:
    case RawKind::kEnterOp:
    case RawKind::kExitOp:
    case RawKind::kFailFn:
    case RawKind::kFailOp:
    case RawKind::kLost:
      return true;
    default:
      return false;
  }
}

namespace {

bool begins_trace(const RawEvent& e) {
  const RawKind k = kind_of(e.b);
  return k == RawKind::kTraceBegin || k == RawKind::kTraceParent || k == RawKind::kW3c;
}

}  // namespace

int depth_step(const RawEvent& e) {
  switch (kind_of(e.b)) {
    case RawKind::kEnterFn:
    case RawKind::kEnterOp:
      return 1;
    case RawKind::kExitFn:
    case RawKind::kExitOp:
    case RawKind::kFailFn:
    case RawKind::kFailOp:
      return -1;
    default:
      return 0;
  }
}

WindowSlice window_slice(const RawEvent* events, size_t n, uint64_t cutoff, uint64_t cut) {
  WindowSlice w;
  // The end: the first timed event after the cut, without the trace
  // begins right before it (they only lead to it).
  size_t last = n;
  for (size_t i = 0; i < n; ++i) {
    if (has_time(events[i]) && events[i].a > cut) {
      last = i;
      break;
    }
  }
  while (last > 0 && begins_trace(events[last - 1])) --last;
  w.last = last;
  // The first timed event in the window; its trace is the oldest kept.
  size_t q = last;
  for (size_t i = 0; i < last; ++i) {
    if (has_time(events[i]) && events[i].a >= cutoff) {
      q = i;
      break;
    }
  }
  // The begin of the trace that holds q (or, with no event in the window,
  // of the newest trace, kept only if it is still open at the cut).
  size_t begin = last;  // none
  for (size_t i = (q < last ? q + 1 : last); i-- > 0;) {
    if (kind_of(events[i].b) == RawKind::kTraceBegin) {
      begin = i;
      break;
    }
  }
  if (q == last) {
    if (begin == last) {
      w.first = last;
      return w;
    }
    int depth = 0;
    for (size_t i = begin; i < last; ++i) depth += depth_step(events[i]);
    w.first = depth > 0 ? begin : last;
    return w;
  }
  if (begin != last) {
    w.first = begin;
    return w;
  }
  // q's trace began before the oldest held event: skip it, from the next
  // trace begin on.
  size_t next = q;
  while (next < last && kind_of(events[next].b) != RawKind::kTraceBegin) ++next;
  w.first = next;
  w.cut_off_start = next;
  return w;
}

size_t salvage_calls(const RawEvent* events, size_t end, uint64_t cutoff, uint64_t* next_id,
                     std::vector<RawEvent>* out) {
  size_t i = 0;
  while (i < end && !(has_time(events[i]) && events[i].a >= cutoff)) ++i;
  size_t made = 0;
  int depth = 0;  // within the salvaged call; frames opened before it are skipped
  for (; i < end; ++i) {
    const RawEvent& e = events[i];
    const int step = depth_step(e);
    const bool cause_of_fail = kind_of(e.b) == RawKind::kCause;
    if (step > 0) {
      if (depth == 0) {
        out->push_back({(*next_id)++, pack(RawKind::kTraceBegin, 0)});
        ++made;
      }
      ++depth;
      out->push_back(e);
    } else if (step < 0) {
      const bool kept = depth > 0;
      if (kept) {
        --depth;
        out->push_back(e);
      }
      // A failed exit's cause follows it.
      if (i + 1 < end && kind_of(events[i + 1].b) == RawKind::kCause) {
        if (kept) out->push_back(events[i + 1]);
        ++i;
      }
    } else if (!cause_of_fail && depth > 0) {
      out->push_back(e);  // a loss marker inside a kept call
    }
  }
  return made;
}

}  // namespace sonde::monitor::flight
