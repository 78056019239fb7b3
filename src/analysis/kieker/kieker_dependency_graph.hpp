// Kieker's five dependency graphs, built from message traces: between
// execution containers (containerDependencyGraph.dot), between components
// (assembly- and deploymentComponentDependencyGraph.dot) and between
// operations (assembly- and deploymentOperationDependencyGraph.dot). Nodes
// are Kieker's entities (kieker_system_model.hpp), 0 is 'Entry'; an edge
// counts the calls from one node to another.
//
// Optional response-time decoration (Kieker's responseTimes-ns/us/ms/s):
// each call from another node adds the callee's response time, converted
// to the display unit by truncation first, to the callee node's min, max
// and total; the average is the total over the count, rounded.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/kieker/kieker_trace.hpp"

namespace sonde::analysis {

enum class KiekerGraphKind : uint8_t {
  kContainer,
  kAssemblyComponent,
  kDeploymentComponent,
  kAssemblyOperation,
  kDeploymentOperation,
};

enum class TimeUnit : uint8_t { kNanoseconds, kMicroseconds, kMilliseconds, kSeconds };

// "ns", "us", "ms", "s".
std::string_view to_string(TimeUnit unit);
bool parse_time_unit(std::string_view text, TimeUnit* out);
// Nanoseconds in `unit`, truncated toward zero (Java's TimeUnit.convert).
int64_t convert_ns(int64_t ns, TimeUnit unit);

struct ResponseTimes {
  uint64_t count = 0;
  int64_t total = 0;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();

  void add(int64_t t) {
    ++count;
    total += t;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  // Kieker's Math.round of the mean: halves round up.
  int64_t rounded_mean() const;
};

class KiekerDependencyGraph {
 public:
  struct Node {
    // Created by an assumed execution (flow traces without call events).
    bool assumed = false;
    ResponseTimes times;  // empty unless decorated
  };
  struct Edge {
    uint64_t calls = 0;
    bool assumed = false;  // either end is assumed
  };
  using EdgeKey = std::pair<int32_t, int32_t>;  // (caller node, callee node)

  // `response_times`: decorate nodes with response times in that unit.
  explicit KiekerDependencyGraph(KiekerGraphKind kind,
                                 std::optional<TimeUnit> response_times = std::nullopt);

  void add(const KiekerTrace& trace);

  KiekerGraphKind kind() const { return kind_; }
  const std::optional<TimeUnit>& response_times() const { return unit_; }
  // By node id: container, component or pair id per kind; 0 = 'Entry'.
  const std::map<int32_t, Node>& nodes() const { return nodes_; }
  const std::map<EdgeKey, Edge>& edges() const { return edges_; }

 private:
  int32_t node_id(const KiekerExecution& k) const;

  KiekerGraphKind kind_;
  std::optional<TimeUnit> unit_;
  std::map<int32_t, Node> nodes_;
  std::map<EdgeKey, Edge> edges_;
};

// Kieker's DOT text for the graph. Self-loops are left out unless asked for
// (Kieker's --include-self-loops); their calls still count internally.
std::string kieker_dependency_graph_dot(const KiekerDependencyGraph& graph,
                                        const KiekerSystemModel& model, bool short_labels,
                                        bool include_self_loops = false);

}  // namespace sonde::analysis
