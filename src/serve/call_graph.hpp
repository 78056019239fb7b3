// The operation dependency graph of a store (its call edges) as JSON for the
// UI and as DOT for Graphviz. Built from store::CallEdge only, so every
// store implementation gets the same picture.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/trace_store.hpp"

namespace sonde::serve {

// {"nodes": [{"id", "operation", "label", "calls"}], "edges": [{"caller",
// "callee", "calls"}]} with ids indexing nodes; node 0 is the virtual
// 'Entry' (operation ""), calls = calls into the node.
nlohmann::json call_graph_json(const std::vector<store::CallEdge>& edges);

// The same graph in DOT; every label goes through analysis::dot_quote.
std::string call_graph_dot(const std::vector<store::CallEdge>& edges);

}  // namespace sonde::serve
