#include "diagnose/engine/search.hpp"

#include <algorithm>

#include "diagnose/diagnosis.hpp"

namespace sonde::diagnose::engine {
namespace {

bool same_series(const ExperimentNeed& a, const ExperimentNeed& b) {
  return a.kind == b.kind && a.series == b.series;
}

bool contains(const std::vector<ExperimentNeed>& list, const ExperimentNeed& need) {
  return std::any_of(list.begin(), list.end(),
                     [&](const ExperimentNeed& e) { return same_series(e, need); });
}

std::vector<ExperimentNeed> own_needs(const HierarchyNode& node) {
  return heuristic_registry().at(node.heuristic)->needs();
}

bool all_ran(const HierarchyNode& node, const std::vector<ExperimentNeed>& ran) {
  const std::vector<ExperimentNeed> needs = own_needs(node);
  return std::all_of(needs.begin(), needs.end(),
                     [&](const ExperimentNeed& n) { return contains(ran, n); });
}

// `node` is reached; collects its needs and walks on to its children where
// the search goes there. `result` is the node's result, if evaluated.
void collect(const HierarchyNode& node, const NodeResult* result,
             const std::vector<ExperimentNeed>& merged, const std::vector<ExperimentNeed>& ran,
             std::vector<ExperimentNeed>& out) {
  for (const ExperimentNeed& need : own_needs(node)) {
    if (contains(ran, need) || contains(out, need)) continue;
    const auto m = std::find_if(merged.begin(), merged.end(),
                                [&](const ExperimentNeed& e) { return same_series(e, need); });
    out.push_back(m != merged.end() ? *m : need);
  }
  if (result == nullptr) return;
  // As run_diagnosis: children of a detected node, and of one that could
  // not be evaluated from data it had (so its failure hides nothing). One
  // still waiting for its experiments is not examined yet.
  const bool go_on = result->status == Status::kDetected ||
                     (result->status == Status::kNotEvaluated && all_ran(node, ran));
  if (!go_on) return;
  for (const HierarchyNode& child : node.children) {
    const auto r = std::find_if(result->children.begin(), result->children.end(),
                                [&](const NodeResult& c) { return c.id == child.id; });
    collect(child, r != result->children.end() ? &*r : nullptr, merged, ran, out);
  }
}

}  // namespace

std::vector<ExperimentNeed> needs_to_run(const HierarchyNode& root, const NodeResult& result,
                                         const std::vector<ExperimentNeed>& merged,
                                         const std::vector<ExperimentNeed>& ran) {
  std::vector<ExperimentNeed> out;
  collect(root, &result, merged, ran, out);
  return out;
}

bool run_search(Engine& engine, const EnvironmentConfig& env, const DiagnoseConfig& config,
                const std::string& data_dir) {
  const std::vector<ExperimentNeed> merged = merged_needs(config.root);
  std::vector<ExperimentNeed> ran;
  for (;;) {
    NodeResult result;
    try {
      result = run_diagnosis(load_experiment_data(data_dir), config);
    } catch (const std::exception& e) {  // unreadable data: stop, keep what ran
      engine.fail(std::string("the search cannot read its experiments: ") + e.what());
      return false;
    }
    // A Ctrl-C during the diagnosis: no next level, and the run is not complete.
    if (engine.cancel_flag()) {
      engine.fail("cancelled");
      return false;
    }
    const std::vector<ExperimentNeed> next = needs_to_run(config.root, result, merged, ran);
    if (next.empty()) return true;
    // The ETA counts everything the search may still reach.
    std::vector<ExperimentNeed> rest;
    for (const ExperimentNeed& m : merged)
      if (!contains(ran, m)) rest.push_back(m);
    engine.expect_total(plan_from_needs(env, rest), true);
    for (const SeriesPlan& plan : plan_from_needs(env, next))
      if (!engine.run(plan)) return false;
    ran.insert(ran.end(), next.begin(), next.end());
  }
}

}  // namespace sonde::diagnose::engine
