#include "analysis/render/graph_json.hpp"

namespace sonde::analysis {
namespace {

void add_key_and_time(nlohmann::json& j, const OperationKey& key, const TimeAccumulator& time) {
  j["host"] = key.host;
  j["component"] = key.component;
  j["operation"] = key.operation;
  j["calls"] = time.count;
  j["failed"] = time.failed;
  j["total_ns"] = time.total;
  j["mean_ns"] = time.mean();
  if (time.count > 0) {
    j["min_ns"] = time.min;
    j["max_ns"] = time.max;
  }
}

}  // namespace

nlohmann::json to_json(const DependencyGraph& graph) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    nlohmann::json n = {{"id", i}};
    if (i == 0) {
      n["entry"] = true;
    } else {
      add_key_and_time(n, graph.nodes()[i].key, graph.nodes()[i].time);
    }
    nodes.push_back(std::move(n));
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const DependencyEdge& e : graph.edges()) {
    edges.push_back({{"caller", e.caller}, {"callee", e.callee}, {"calls", e.calls}});
  }
  return {{"level", to_string(graph.level())}, {"nodes", nodes}, {"edges", edges}};
}

nlohmann::json to_json(const AggregatedCallTree& tree) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < tree.nodes().size(); ++i) {
    const AggregatedCallNode& node = tree.nodes()[i];
    nlohmann::json n = {{"id", i}, {"parent", node.parent}};
    if (i == 0) {
      n["root"] = true;
    } else {
      add_key_and_time(n, node.key, node.time);
    }
    n["children"] = node.children;
    nodes.push_back(std::move(n));
  }
  return {{"level", to_string(tree.level())}, {"traces", tree.traces()}, {"nodes", nodes}};
}

}  // namespace sonde::analysis
