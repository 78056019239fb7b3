// The problem hierarchy (docs/diagnose/hierarchy.md): which heuristic sits
// where, with which parameters. The thesis' default is built in; a JSON
// config replaces it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/heuristic.hpp"

namespace sonde::diagnose {

struct HierarchyNode {
  std::string id;
  std::string heuristic;
  std::map<std::string, double> params;  // overrides of the heuristic's defaults
  std::vector<HierarchyNode> children;
};

struct DiagnoseConfig {
  Settings settings;
  HierarchyNode root;
};

// The thesis hierarchy (Wert, Fig. 4.2 as used in DynamicSpotter).
HierarchyNode default_hierarchy();
nlohmann::json default_config_json();

// What the experiment engine must run for the whole tree: the needs of
// every node merged, one entry per (kind, series) with the most steps and
// the union of the probes, so two heuristics share one experiment.
std::vector<ExperimentNeed> merged_needs(const HierarchyNode& root);

// Parses a config (docs/diagnose/hierarchy.md). Throws DiagnoseError naming
// the offending key (JSON path) for unknown keys, wrong types, unknown
// heuristics or parameters, duplicate ids.
DiagnoseConfig parse_diagnose_config(const nlohmann::json& config);
DiagnoseConfig load_diagnose_config(const std::string& path);

// The diagnosis config an environment config implies (config.md,
// "requirements": its "default" and "services"), for parse_diagnose_config;
// null when it states no requirements.
nlohmann::json requirements_of_environment(const nlohmann::json& environment);

}  // namespace sonde::diagnose
