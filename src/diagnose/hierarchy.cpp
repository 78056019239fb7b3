#include "diagnose/hierarchy.hpp"

#include <algorithm>
#include <fstream>
#include <set>

namespace sonde::diagnose {
namespace {

using nlohmann::json;

HierarchyNode node(std::string id, std::vector<HierarchyNode> children = {}) {
  HierarchyNode n;
  n.heuristic = id;
  n.id = std::move(id);
  n.children = std::move(children);
  return n;
}

[[noreturn]] void fail(const std::string& key, const std::string& problem) {
  throw DiagnoseError("diagnose config: key '" + key + "': " + problem);
}

void check_keys(const json& j, const std::string& path, const std::set<std::string>& allowed) {
  if (!j.is_object()) fail(path, "must be an object");
  for (const auto& [key, value] : j.items()) {
    if (!allowed.count(key)) {
      std::string known;
      for (const std::string& k : allowed) known += (known.empty() ? "" : ", ") + k;
      fail(path.empty() ? key : path + "." + key, "unknown key (known: " + known + ")");
    }
  }
}

double number(const json& j, const std::string& key, const std::string& path) {
  if (!j.is_number()) fail(path + key, "must be a number");
  return j.get<double>();
}

Requirement parse_requirement(const json& j, const std::string& path, Requirement r) {
  check_keys(j, path, {"threshold_ms", "percentile"});
  if (j.contains("threshold_ms")) {
    r.threshold_ms = number(j["threshold_ms"], path + ".threshold_ms", "");
    if (r.threshold_ms <= 0) fail(path + ".threshold_ms", "must be > 0");
  }
  if (j.contains("percentile")) {
    r.percentile = number(j["percentile"], path + ".percentile", "");
    if (r.percentile <= 0 || r.percentile > 1) fail(path + ".percentile", "must be in (0, 1]");
  }
  return r;
}

HierarchyNode parse_node(const json& j, const std::string& path, std::set<std::string>& ids) {
  check_keys(j, path, {"id", "heuristic", "params", "children"});
  HierarchyNode n;
  if (!j.contains("id") || !j["id"].is_string()) fail(path + ".id", "missing or not a string");
  n.id = j["id"].get<std::string>();
  if (!ids.insert(n.id).second) fail(path + ".id", "duplicate id '" + n.id + "'");
  n.heuristic = n.id;
  if (j.contains("heuristic")) {
    if (!j["heuristic"].is_string()) fail(path + ".heuristic", "must be a string");
    n.heuristic = j["heuristic"].get<std::string>();
  }
  const auto& registry = heuristic_registry();
  auto it = registry.find(n.heuristic);
  if (it == registry.end()) fail(path + ".heuristic", "unknown heuristic '" + n.heuristic + "'");
  if (j.contains("params")) {
    const json& params = j["params"];
    if (!params.is_object()) fail(path + ".params", "must be an object");
    const std::map<std::string, double> defaults = it->second->defaults();
    const std::map<std::string, ParameterKind> kinds = it->second->parameter_kinds();
    for (const auto& [key, value] : params.items()) {
      if (!defaults.count(key)) {
        std::string known;
        for (const auto& [k, v] : defaults) known += (known.empty() ? "" : ", ") + k;
        fail(path + ".params." + key, "unknown parameter of " + n.heuristic +
                                          " (known: " + (known.empty() ? "none" : known) + ")");
      }
      n.params[key] = number(value, path + ".params." + key, "");
      // A switch selects a rule by number; any other value would leave the
      // heuristic to guess (or to report itself not evaluated mid-search).
      const auto kind = kinds.find(key);
      if (kind != kinds.end()) {
        const std::string problem = parameter_value_problem(kind->second, n.params[key]);
        if (!problem.empty()) {
          fail(path + ".params." + key,
               "a switch of " + n.heuristic + ": must be " + problem + ", not " + value.dump());
        }
      }
    }
  }
  if (j.contains("children")) {
    const json& children = j["children"];
    if (!children.is_array()) fail(path + ".children", "must be an array");
    for (size_t i = 0; i < children.size(); ++i) {
      n.children.push_back(
          parse_node(children[i], path + ".children[" + std::to_string(i) + "]", ids));
    }
  }
  return n;
}

json node_json(const HierarchyNode& n) {
  json j = {{"id", n.id}, {"heuristic", n.heuristic}};
  if (!n.children.empty()) {
    json children = json::array();
    for (const HierarchyNode& c : n.children) children.push_back(node_json(c));
    j["children"] = children;
  }
  return j;
}

}  // namespace

HierarchyNode default_hierarchy() {
  return node(
      "performance_problem",
      {node("application_hiccups"), node("the_ramp"), node("time_outside_application"),
       node("continuously_violated_requirements",
            {node(
                "traffic_jam",
                {node("one_lane_bridge",
                      {node("dispensable_synchronization"), node("database_olb")}),
                 node("database_congestion", {node("the_stifle"), node("expensive_database_call")}),
                 node("excessive_messaging", {node("the_blob"), node("empty_semi_trucks")})})})});
}

json default_config_json() {
  const Settings s;
  return {
      {"alpha", s.alpha},
      {"cores", s.cores},
      {"requirement",
       {{"threshold_ms", s.requirement.threshold_ms}, {"percentile", s.requirement.percentile}}},
      {"services", json::object()},
      {"hierarchy", node_json(default_hierarchy())}};
}

std::vector<ExperimentNeed> merged_needs(const HierarchyNode& root) {
  std::vector<ExperimentNeed> out;
  std::vector<const HierarchyNode*> stack{&root};
  while (!stack.empty()) {
    const HierarchyNode* n = stack.back();
    stack.pop_back();
    for (const ExperimentNeed& need : heuristic_registry().at(n->heuristic)->needs()) {
      auto it = std::find_if(out.begin(), out.end(), [&](const ExperimentNeed& e) {
        return e.kind == need.kind && e.series == need.series;
      });
      if (it == out.end()) {
        out.push_back(need);
        continue;
      }
      it->steps = std::max(it->steps, need.steps);
      for (const std::string& p : need.probes) {
        if (std::find(it->probes.begin(), it->probes.end(), p) == it->probes.end())
          it->probes.push_back(p);
      }
    }
    for (const HierarchyNode& c : n->children) stack.push_back(&c);
  }
  return out;
}

DiagnoseConfig parse_diagnose_config(const json& config) {
  check_keys(config, "", {"alpha", "cores", "requirement", "services", "hierarchy"});
  DiagnoseConfig out;
  if (config.contains("alpha")) {
    out.settings.alpha = number(config["alpha"], "alpha", "");
    if (out.settings.alpha <= 0 || out.settings.alpha >= 1) fail("alpha", "must be in (0, 1)");
  }
  if (config.contains("cores")) {
    const json& cores = config["cores"];
    if (!cores.is_number_integer() || cores.get<int>() < 0)
      fail("cores", "must be an integer >= 0");
    out.settings.cores = cores.get<int>();
  }
  if (config.contains("requirement")) {
    out.settings.requirement =
        parse_requirement(config["requirement"], "requirement", out.settings.requirement);
  }
  if (config.contains("services")) {
    const json& services = config["services"];
    if (!services.is_object()) fail("services", "must be an object");
    for (const auto& [name, value] : services.items()) {
      out.settings.per_service[name] =
          parse_requirement(value, "services." + name, out.settings.requirement);
    }
  }
  if (config.contains("hierarchy")) {
    std::set<std::string> ids;
    out.root = parse_node(config["hierarchy"], "hierarchy", ids);
  } else {
    out.root = default_hierarchy();
  }
  return out;
}

DiagnoseConfig load_diagnose_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DiagnoseError(path + ": cannot open");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw DiagnoseError(path + ": invalid JSON: " + e.what());
  }
  try {
    return parse_diagnose_config(j);
  } catch (const DiagnoseError& e) {
    throw DiagnoseError(path + ": " + e.what());
  }
}

nlohmann::json requirements_of_environment(const nlohmann::json& environment) {
  nlohmann::json out;
  const auto r = environment.find("requirements");
  if (r == environment.end() || !r->is_object()) return out;
  out = nlohmann::json::object();
  if (r->contains("default")) out["requirement"] = (*r)["default"];
  if (r->contains("services")) out["services"] = (*r)["services"];
  return out;
}

}  // namespace sonde::diagnose
