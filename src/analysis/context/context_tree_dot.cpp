#include "analysis/context/context_tree_dot.hpp"

#include <sstream>
#include <vector>

#include "analysis/text/dot_escape.hpp"
#include "analysis/text/duration_format.hpp"

namespace sonde::analysis {

std::string context_tree_label(const ContextData& data, const ContextNode& node) {
  if (node.level < 0) return "all observations";
  std::string label = data.describe(static_cast<ContextLevel>(node.level), node.context);
  if (node.merged > 1) label += " (+" + std::to_string(node.merged - 1) + " merged)";
  return label;
}

std::string context_tree_dot(const ContextData& data, const ContextTree& tree) {
  std::ostringstream out;
  out << "digraph cct {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  const auto& nodes = tree.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ContextNode& n = nodes[i];
    if (n.removed) continue;
    const std::string level = n.level < 0 ? "root" : to_string(static_cast<ContextLevel>(n.level));
    std::vector<std::string> lines = {level + ": " + context_tree_label(data, n),
                                      "n=" + std::to_string(n.n)};
    if (n.level >= 0) {
      lines.back() += " median " + format_duration(n.quartiles.median) + " IQR " +
                      format_duration(n.quartiles.iqr());
    }
    const bool leaf = tree.is_leaf(static_cast<int32_t>(i));
    out << "  n" << i << " [label=" << dot_label(lines) << (leaf ? ", style=bold" : "") << "];\n";
    if (n.parent >= 0) out << "  n" << n.parent << " -> n" << i << ";\n";
    if (n.linked_to >= 0) {
      out << "  n" << i << " -> n" << n.linked_to << " [style=dashed, label=\"linked\"];\n";
    }
  }
  out << "}\n";
  return out.str();
}

nlohmann::json context_node_json(const ContextData& data, const ContextTree& tree, int32_t id) {
  const ContextNode& n = tree.nodes()[static_cast<size_t>(id)];
  nlohmann::json j = {
      {"id", id},
      {"parent", n.parent},
      {"level", n.level < 0 ? "root" : to_string(static_cast<ContextLevel>(n.level))},
      {"label", context_tree_label(data, n)},
      {"n", n.n},
      {"leaf", tree.is_leaf(id)}};
  if (n.level >= 0) {
    j["median_ns"] = n.quartiles.median;
    j["iqr_ns"] = n.quartiles.iqr();
    j["sd_ns"] = n.sd;
    j["bimodality"] = n.bimodality;
    j["merged_contexts"] = n.merged;
  }
  if (n.linked_to >= 0) j["linked_to"] = n.linked_to;
  return j;
}

nlohmann::json context_tree_json(const ContextData& data, const ContextTree& tree) {
  nlohmann::json out = nlohmann::json::array();
  const auto& nodes = tree.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].removed) continue;
    out.push_back(context_node_json(data, tree, static_cast<int32_t>(i)));
  }
  return out;
}

nlohmann::json context_level_json(const char* name, const LevelStats& s) {
  return {{"level", name},
          {"contexts", s.contexts},
          {"singleton_contexts", s.singleton_contexts},
          {"observations_per_context", s.mean_observations()},
          {"weighted_sd_ns", s.weighted_sd},
          {"sd_reduction_percent", s.reduction_percent},
          {"bimodal_percent", s.bimodal_percent}};
}

}  // namespace sonde::analysis
