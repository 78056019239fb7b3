// The reconstructed traces of one experiment's log (flow events of the
// response_time probe), for heuristics that look at the structure of
// requests (Empty Semi Trucks). Read once per experiment and cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "analysis/model/trace_model.hpp"
#include "diagnose/experiment_data.hpp"
#include "format/string_pool.hpp"

namespace sonde::diagnose::heuristics {

struct ExperimentTraces {
  std::shared_ptr<format::StringPool> strings;  // owns the traces' strings
  std::map<int64_t, analysis::Trace> traces;    // valid traces by trace id
  size_t invalid = 0;                           // traces that could not be reconstructed
  std::string error;                            // the log could not be read
};

// Traces that start inside the experiment's stable phase (all, when it has none).
const ExperimentTraces& experiment_traces(const Experiment& e);

}  // namespace sonde::diagnose::heuristics
