#include "diagnose/diagnosis.hpp"

#include "diagnose/heuristics/common.hpp"

namespace sonde::diagnose {
namespace {

void mark_skipped(const HierarchyNode& n, NodeResult& out, const std::string& parent) {
  for (const HierarchyNode& c : n.children) {
    NodeResult r;
    r.id = c.id;
    r.heuristic = c.heuristic;
    r.title = heuristic_registry().at(c.heuristic)->title();
    r.status = Status::kSkipped;
    r.reason = "not examined: parent '" + parent + "' was not detected";
    mark_skipped(c, r, parent);
    out.children.push_back(std::move(r));
  }
}

// What is wrong with the first parameter whose value is not one its kind
// takes (a switch of 2.5); empty when none.
std::string first_bad_value(const Heuristic& h, const std::map<std::string, double>& params) {
  for (const auto& [key, kind] : h.parameter_kinds()) {
    const auto value = params.find(key);
    if (value == params.end()) continue;
    const std::string problem = parameter_value_problem(kind, value->second);
    if (problem.empty()) continue;
    return "parameter " + key + " must be " + problem + ", not " + heuristics::fmt(value->second);
  }
  return "";
}

// `siblings`: what the node's earlier siblings shared, by heuristic;
// `shared` receives what this node shares.
NodeResult evaluate(const HierarchyNode& n, const ExperimentData& data, const Settings& settings,
                    std::map<std::string, nlohmann::json>& ancestors,
                    const std::map<std::string, nlohmann::json>& siblings, nlohmann::json& shared) {
  const Heuristic& h = *heuristic_registry().at(n.heuristic);
  Context ctx{data, settings, h.defaults(), ancestors, &siblings};
  for (const auto& [key, value] : n.params) ctx.params[key] = value;
  shared = nlohmann::json::object();
  NodeResult r;
  const std::string bad_value = first_bad_value(h, ctx.params);
  try {
    r = bad_value.empty() ? h.evaluate(ctx, shared) : not_evaluated(bad_value);
  } catch (const std::exception& e) {
    r = not_evaluated(std::string("evaluation failed: ") + e.what());
  }
  r.id = n.id;
  r.heuristic = n.heuristic;
  r.title = h.title();
  // Thesis: children only when the parent is detected. A parent that could
  // not be evaluated (missing data) must not hide its children, so they are
  // evaluated too; the report says so.
  if (r.status == Status::kDetected || r.status == Status::kNotEvaluated) {
    ancestors[n.heuristic] = shared;
    std::map<std::string, nlohmann::json> earlier;
    for (const HierarchyNode& c : n.children) {
      nlohmann::json child_shared;
      r.children.push_back(evaluate(c, data, settings, ancestors, earlier, child_shared));
      // Only an evaluated sibling's findings count.
      if (r.children.back().status != Status::kNotEvaluated) earlier[c.heuristic] = child_shared;
    }
    ancestors.erase(n.heuristic);
  } else {
    mark_skipped(n, r, n.id);
  }
  return r;
}

void count(const NodeResult& r, ResultCounts& c) {
  switch (r.status) {
    case Status::kDetected:
      ++c.detected;
      break;
    case Status::kNotDetected:
      ++c.not_detected;
      break;
    case Status::kSkipped:
      ++c.skipped;
      break;
    case Status::kNotEvaluated:
      ++c.not_evaluated;
      break;
  }
  for (const NodeResult& child : r.children) count(child, c);
}

}  // namespace

NodeResult run_diagnosis(const ExperimentData& data, const DiagnoseConfig& config) {
  std::map<std::string, nlohmann::json> ancestors;
  const std::map<std::string, nlohmann::json> no_siblings;
  nlohmann::json shared;
  return evaluate(config.root, data, config.settings, ancestors, no_siblings, shared);
}

ResultCounts count_results(const NodeResult& root) {
  ResultCounts c;
  count(root, c);
  return c;
}

}  // namespace sonde::diagnose
