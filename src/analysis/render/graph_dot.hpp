// Graphviz DOT text for the aggregated graphs. Node ids are generated
// ("n0", "n1", ...); every name goes through dot_quote (dot_escape.hpp).
#pragma once

#include <string>

#include "analysis/model/aggregated_call_tree.hpp"
#include "analysis/model/dependency_graph.hpp"

namespace sonde::analysis {

struct DotOptions {
  // Kieker's --short-labels: "Catalog" and "getBook(..)" instead of the
  // qualified class and the full signature.
  bool short_labels = true;
  // Add counts and mean response times to node labels.
  bool show_times = true;
};

// Tree from 'Entry'; edge labels are call counts, node labels name the
// operation (with its host on the deployment level) and its mean time.
std::string to_dot(const AggregatedCallTree& tree, const DotOptions& options = {});

// Nodes grouped in clusters: by host (deployment level), then by component.
// Edge labels are call counts.
std::string to_dot(const DependencyGraph& graph, const DotOptions& options = {});

}  // namespace sonde::analysis
