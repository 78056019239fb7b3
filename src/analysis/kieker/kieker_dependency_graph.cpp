#include "analysis/kieker/kieker_dependency_graph.hpp"

#include <cmath>

namespace sonde::analysis {

std::string_view to_string(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNanoseconds:
      return "ns";
    case TimeUnit::kMicroseconds:
      return "us";
    case TimeUnit::kMilliseconds:
      return "ms";
    case TimeUnit::kSeconds:
      return "s";
  }
  return "?";
}

bool parse_time_unit(std::string_view text, TimeUnit* out) {
  for (TimeUnit u : {TimeUnit::kNanoseconds, TimeUnit::kMicroseconds, TimeUnit::kMilliseconds,
                     TimeUnit::kSeconds}) {
    if (text == to_string(u)) {
      *out = u;
      return true;
    }
  }
  return false;
}

int64_t convert_ns(int64_t ns, TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNanoseconds:
      return ns;
    case TimeUnit::kMicroseconds:
      return ns / 1'000;
    case TimeUnit::kMilliseconds:
      return ns / 1'000'000;
    case TimeUnit::kSeconds:
      return ns / 1'000'000'000;
  }
  return ns;
}

int64_t ResponseTimes::rounded_mean() const {
  if (count == 0) return 0;
  const double mean = static_cast<double>(total) / static_cast<double>(count);
  return static_cast<int64_t>(std::floor(mean + 0.5));
}

KiekerDependencyGraph::KiekerDependencyGraph(KiekerGraphKind kind,
                                             std::optional<TimeUnit> response_times)
    : kind_(kind), unit_(response_times) {
  nodes_[kKiekerRootId];  // 'Entry' is always drawn
}

int32_t KiekerDependencyGraph::node_id(const KiekerExecution& k) const {
  switch (kind_) {
    case KiekerGraphKind::kContainer:
      return k.ids.container;
    case KiekerGraphKind::kAssemblyComponent:
      return k.ids.assembly;
    case KiekerGraphKind::kDeploymentComponent:
      return k.ids.allocation;
    case KiekerGraphKind::kAssemblyOperation:
      return k.assembly_pair;
    case KiekerGraphKind::kDeploymentOperation:
      return k.allocation_pair;
  }
  return kKiekerRootId;
}

void KiekerDependencyGraph::add(const KiekerTrace& trace) {
  // Kieker's container graph knows nothing of assumed calls.
  const bool track_assumed = kind_ != KiekerGraphKind::kContainer;
  for (const TraceMessage& m : trace.messages) {
    if (!m.call) continue;
    const KiekerExecution& callee = trace.executions[static_cast<size_t>(m.receiver)];
    const KiekerExecution* caller =
        m.sender == kEntryExecution ? nullptr : &trace.executions[static_cast<size_t>(m.sender)];
    const int32_t from = caller == nullptr ? kKiekerRootId : node_id(*caller);
    const int32_t to = node_id(callee);
    // A node keeps the assumed flag of the execution that created it.
    for (const auto& [id, k] : {std::pair{from, caller}, std::pair{to, &callee}}) {
      auto [it, inserted] = nodes_.try_emplace(id);
      if (inserted && k != nullptr && track_assumed) it->second.assumed = k->assumed;
    }
    Edge& edge = edges_[{from, to}];
    edge.assumed = nodes_[from].assumed || nodes_[to].assumed;
    ++edge.calls;
    if (unit_ && from != to) {
      nodes_[to].times.add(convert_ns(callee.execution->duration(), *unit_));
    }
  }
}

}  // namespace sonde::analysis
