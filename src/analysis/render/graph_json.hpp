// The dependency graph and the aggregated call tree as JSON, for scripts and
// the web UI: the same content as the DOT pictures, without layout.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"

namespace sonde::analysis {

// {"level": ..., "nodes": [{"id", "host", "component", "operation", "calls",
//  "failed", "total_ns", "mean_ns", "min_ns", "max_ns"}], "edges": [{"caller",
//  "callee", "calls"}]}; node 0 is the virtual 'Entry'.
nlohmann::json to_json(const DependencyGraph& graph);

// {"level": ..., "traces": n, "nodes": [{"id", "parent", "host", ...,
//  "children": [ids]}]}: flat with ids rather than nested, so trees
// thousands of levels deep need no recursion to write or read.
nlohmann::json to_json(const AggregatedCallTree& tree);

}  // namespace sonde::analysis
