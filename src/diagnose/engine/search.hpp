// The thesis' systematic search (Wert, Alg. 1) with experiments on demand:
// a node's experiments run only once the search reaches it, i.e. when its
// parent was detected (or could not be evaluated after its own experiments
// ran). A system without a performance problem costs one load test, not
// the whole hierarchy's experiments.
#pragma once

#include <string>
#include <vector>

#include "diagnose/engine/engine.hpp"
#include "diagnose/hierarchy.hpp"

namespace sonde::diagnose::engine {

// The experiments the search needs next: those of nodes it reaches in
// `result` (the diagnosis of the data so far) that are not in `ran`. Each
// is taken from `merged` (merged_needs of the hierarchy) so one run of a
// series serves every node that needs it, with all their probes.
std::vector<ExperimentNeed> needs_to_run(const HierarchyNode& root, const NodeResult& result,
                                         const std::vector<ExperimentNeed>& merged,
                                         const std::vector<ExperimentNeed>& ran);

// Runs the search: experiments of the reached nodes, the diagnosis of the
// data in `data_dir`, the next level's experiments, until nothing new is
// reached. Returns false if the engine stopped (reason() says why).
bool run_search(Engine& engine, const EnvironmentConfig& env, const DiagnoseConfig& config,
                const std::string& data_dir);

}  // namespace sonde::diagnose::engine
