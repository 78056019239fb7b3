// The calling-context tree as Graphviz DOT (render with graphviz_render.hpp)
// and as JSON: every live node with its level, label, observation count,
// median/IQR/σ; leaves of the model are drawn bold, links dashed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/context/context_levels.hpp"
#include "analysis/context/context_tree.hpp"

namespace sonde::analysis {

std::string context_tree_label(const ContextData& data, const ContextNode& node);
std::string context_tree_dot(const ContextData& data, const ContextTree& tree);
nlohmann::json context_tree_json(const ContextData& data, const ContextTree& tree);
// One node of context_tree_json (the CLI's and the web API's shape).
nlohmann::json context_node_json(const ContextData& data, const ContextTree& tree, int32_t id);
// One level's summary as `sonde context --json` and /api/context print it.
nlohmann::json context_level_json(const char* name, const LevelStats& stats);

}  // namespace sonde::analysis
