// The systematic search (thesis Alg. 1): evaluate the root; examine a
// node's children only when it is detected, otherwise mark them skipped.
#pragma once

#include "diagnose/experiment_data.hpp"
#include "diagnose/hierarchy.hpp"

namespace sonde::diagnose {

NodeResult run_diagnosis(const ExperimentData& data, const DiagnoseConfig& config);

// Counts over the result tree.
struct ResultCounts {
  int detected = 0;
  int not_detected = 0;
  int skipped = 0;
  int not_evaluated = 0;
};
ResultCounts count_results(const NodeResult& root);

}  // namespace sonde::diagnose
