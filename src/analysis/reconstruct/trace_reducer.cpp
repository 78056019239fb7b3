#include "analysis/reconstruct/trace_reducer.hpp"

#include <algorithm>
#include <functional>

namespace sonde::analysis {

TraceReducer::TraceReducer(ReducedTraceSink& reduced, TraceSink& invalid, ReductionOptions options)
    : reduced_(reduced), invalid_(invalid), options_(options) {}

uint64_t TraceReducer::shape_hash(const Trace& trace) {
  // FNV-style mixing of the strings' hashes and the depths.
  uint64_t h = std::hash<std::string_view>{}(trace.host) ^ 0x9E3779B97F4A7C15ull;
  for (const Execution& e : trace.executions) {
    h = (h ^ std::hash<std::string_view>{}(e.operation)) * 0x100000001B3ull;
    h = (h ^ static_cast<uint64_t>(static_cast<uint32_t>(e.ess))) * 0x100000001B3ull;
  }
  return h;
}

bool TraceReducer::same_shape(const ReducedTrace& r, const Trace& trace) {
  if (r.host != trace.host || r.executions.size() != trace.executions.size()) return false;
  for (size_t i = 0; i < r.executions.size(); ++i) {
    if (r.executions[i].ess != trace.executions[i].ess ||
        r.executions[i].operation != trace.executions[i].operation) {
      return false;
    }
  }
  return true;
}

TraceReducer::Shape& TraceReducer::shape_for(const Trace& trace) {
  std::vector<Shape>& chain = shapes_[shape_hash(trace)];
  for (Shape& s : chain) {
    if (same_shape(s.reduced, trace)) return s;
  }
  Shape& s = chain.emplace_back();
  ++shape_count_;
  ReducedTrace& r = s.reduced;
  r.host = trace.host;
  r.first_trace_id = trace.trace_id;
  r.first_start = r.last_start = trace.start_time();
  r.executions.reserve(trace.executions.size());
  for (const Execution& e : trace.executions) {
    ReducedExecution x;
    x.operation = e.operation;
    x.component = e.component;
    x.eoi = e.eoi;
    x.ess = e.ess;
    x.min_duration = x.max_duration = e.duration();
    r.executions.push_back(std::move(x));
  }
  r.min_duration = r.max_duration = trace.duration();
  s.offset_sum.assign(trace.executions.size(), 0.0);
  s.call_duration_sum.assign(trace.executions.size(), 0.0);
  return s;
}

void TraceReducer::on_trace(const Trace& trace) {
  const int64_t start = trace.start_time();
  // A trace past the window, or a new shape in a full window, closes it.
  // Log time only moves forward per connection up to reordering between
  // threads, so the window closes on the first start beyond it.
  if (shape_count_ > 0 &&
      (start - window_start_ >= options_.window_ns ||
       (shape_count_ >= options_.max_shapes && !shapes_.contains(shape_hash(trace))))) {
    flush();
  }
  if (shape_count_ == 0) window_start_ = start;
  ++traces_in_;
  Shape& s = shape_for(trace);
  ReducedTrace& r = s.reduced;
  const int64_t duration = trace.duration();
  ++r.traces;
  s.duration_sum += static_cast<double>(duration);
  r.min_duration = std::min(r.min_duration, duration);
  r.max_duration = std::max(r.max_duration, duration);
  r.first_start = std::min(r.first_start, start);
  r.last_start = std::max(r.last_start, start);
  bool failed = false;
  for (size_t i = 0; i < trace.executions.size(); ++i) {
    const Execution& e = trace.executions[i];
    ReducedExecution& x = r.executions[i];
    s.offset_sum[i] += static_cast<double>(e.tin - start);
    s.call_duration_sum[i] += static_cast<double>(e.duration());
    x.min_duration = std::min(x.min_duration, e.duration());
    x.max_duration = std::max(x.max_duration, e.duration());
    if (e.failed) {
      ++x.failed;
      failed = true;
    }
  }
  if (failed) ++r.failed_traces;
}

void TraceReducer::on_invalid_trace(const InvalidTrace& trace) { invalid_.on_invalid_trace(trace); }

void TraceReducer::flush() {
  // Emitted in order of their first start, so readers see time order.
  std::vector<Shape*> all;
  all.reserve(shape_count_);
  for (auto& [hash, chain] : shapes_) {
    for (Shape& s : chain) all.push_back(&s);
  }
  std::sort(all.begin(), all.end(), [](const Shape* a, const Shape* b) {
    return a->reduced.first_start != b->reduced.first_start
               ? a->reduced.first_start < b->reduced.first_start
               : a->reduced.first_trace_id < b->reduced.first_trace_id;
  });
  for (Shape* s : all) {
    ReducedTrace& r = s->reduced;
    const auto n = static_cast<double>(r.traces);
    r.mean_duration = s->duration_sum / n;
    for (size_t i = 0; i < r.executions.size(); ++i) {
      r.executions[i].mean_offset = s->offset_sum[i] / n;
      r.executions[i].mean_duration = s->call_duration_sum[i] / n;
    }
    reduced_.on_reduced_trace(r);
    ++reduced_out_;
  }
  shapes_.clear();
  shape_count_ = 0;
}

}  // namespace sonde::analysis
