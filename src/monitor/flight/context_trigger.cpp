#include "monitor/flight/context_trigger.hpp"

#include <cstdio>

#include "format/context_key.hpp"
#include "format/operation_name.hpp"
#include "monitor/registry.hpp"
#include "monitor/writers/writer_core.hpp"

namespace sonde::monitor::flight {

std::string ContextTrigger::load(const std::string& path, double threshold, double min_excess_ns) {
  if (std::string err = format::read_context_fences(path, &fences_); !err.empty()) return err;
  if (fences_.by_trace_context.empty()) return "the model has no trace contexts";
  threshold_ = threshold;
  min_excess_ns_ = min_excess_ns;
  active_ = true;
  return "";
}

uint64_t ContextTrigger::operation_key(uint64_t word, WriterCore& core) {
  if (auto it = op_keys_.find(word); it != op_keys_.end()) return it->second;
  // The signature the log's reader will give this operation: the name and
  // module the writer records, in C++ form (format/operation_name.hpp).
  std::string name, module;
  const uint64_t payload = payload_of(word);
  if (kind_of(word) == RawKind::kEnterFn) {
    const std::string* n = core.name_function(payload);
    const std::string* m = core.function_module(payload);
    name = n != nullptr ? *n : "<unknown>";
    module = m != nullptr ? *m : "";
  } else {
    ManualOperation op;
    name = lookup_operation(static_cast<uint32_t>(payload), &op)
               ? op.name
               : "<unregistered operation " + std::to_string(payload) + ">";
    module = core.process().executable;
  }
  const auto kind = kind_of(word) == RawKind::kEnterFn ? format::native::OperationKind::kFunction
                                                       : format::native::OperationKind::kManual;
  std::string signature =
      format::operation_name(name, module, format::NameForm::kCpp, kind).operation;
  const uint64_t key = format::context_key::operation(signature);
  op_keys_.emplace(word, key);
  op_names_.try_emplace(key, std::move(signature));
  return key;
}

bool ContextTrigger::on_event(Stream& st, const RawEvent& e, WriterCore& core, double ns_per_tick) {
  switch (kind_of(e.b)) {
    case RawKind::kEnterFn:
    case RawKind::kEnterOp: {
      ++st.depth;
      if (st.skip) return false;
      if (st.ops.size() == kMaxExecutions) {
        st.skip = true;
        ++stats_.too_large;
        return false;
      }
      const auto position = static_cast<int32_t>(st.ops.size());
      st.ops.push_back(operation_key(e.b, core));
      st.parent.push_back(st.open.empty() ? -1 : st.open.back());
      st.start.push_back(e.a);
      st.elapsed.push_back(0);
      st.open.push_back(position);
      return false;
    }
    case RawKind::kExitFn:
    case RawKind::kExitOp:
    case RawKind::kFailFn:
    case RawKind::kFailOp: {
      if (st.depth == 0) return false;  // entered before a fork, or before the rings
      --st.depth;
      if (!st.skip && !st.open.empty()) {
        const auto p = static_cast<size_t>(st.open.back());
        st.elapsed[p] = e.a - st.start[p];
        st.open.pop_back();
      }
      if (st.depth != 0) return false;
      const bool anomalous = !st.skip && finish(st, ns_per_tick);
      if (st.ops.capacity() > kKeptCapacity) {
        st = Stream{};  // one huge trace must not hold its memory for the thread's life
      } else {
        st.ops.clear();
        st.parent.clear();
        st.start.clear();
        st.elapsed.clear();
        st.open.clear();
        st.skip = false;
      }
      return anomalous;
    }
    case RawKind::kLost:  // the trace under way lost events: its shape is not known
      if (st.depth != 0 && !st.skip) {
        st.skip = true;
        ++stats_.damaged;
      }
      return false;
    default:
      return false;
  }
}

bool ContextTrigger::finish(const Stream& st, double ns_per_tick) {
  const uint64_t shape = format::context_key::trace_shape(st.ops, st.parent);
  double worst = 0;
  size_t worst_at = SIZE_MAX;
  const format::ContextFence* worst_fence = nullptr;
  for (size_t i = 0; i < st.ops.size(); ++i) {
    auto it = fences_.by_trace_context.find(format::context_key::trace(shape, i));
    if (it == fences_.by_trace_context.end()) {
      ++stats_.unknown;
      return false;
    }
    const double ns = static_cast<double>(st.elapsed[i]) * ns_per_tick;
    const double score = format::context_score(it->second, ns);
    // Only executions far enough above their context count, in time too.
    if (ns - it->second.q3 < min_excess_ns_) continue;
    if (worst_at == SIZE_MAX || score > worst) {
      worst = score;
      worst_at = i;
      worst_fence = &it->second;
    }
  }
  ++stats_.scored;
  if (worst_at == SIZE_MAX || worst <= threshold_) return false;
  ++stats_.anomalies;
  char text[256];
  std::snprintf(text, sizeof text,
                " took %.3f ms, its context's third quartile is %.3f ms (score %.1f > %g)",
                static_cast<double>(st.elapsed[worst_at]) * ns_per_tick / 1e6,
                worst_fence->q3 / 1e6, worst, threshold_);
  auto name_of = [this](uint64_t key) {
    auto it = op_names_.find(key);
    return it != op_names_.end() ? it->second : std::string("?");
  };
  const int32_t parent = st.parent[worst_at];
  last_ = "an execution far outside its calling context: " + name_of(st.ops[worst_at]) +
          (parent < 0 ? std::string(" (a root)")
                      : " called from " + name_of(st.ops[static_cast<size_t>(parent)])) +
          text;
  return true;
}

}  // namespace sonde::monitor::flight
