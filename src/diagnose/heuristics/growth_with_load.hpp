// Shared by Dispensable Synchronization and Database OLB: per key (lock,
// SQL statement), does a measured duration grow significantly into every
// violating load step of the scaling series?
#pragma once

#include <string>
#include <vector>

#include "diagnose/heuristics/common.hpp"

namespace sonde::diagnose::heuristics {

struct GrowthSpec {
  std::string record_class;
  std::string probe;
  std::string value_field;  // nanoseconds
  std::string key_field;
  std::string key_label;      // "lock", "SQL"
  std::string context_field;  // extra location, e.g. the operation ("" none)
  bool sql_key = false;       // group keys by SQL shape (literals -> ?)
  // A key without records at a load had nothing to measure there, e.g. a
  // lock without waits: uncontended locks write nothing. Then appearing
  // at the next load with at least `min_appearing` values is growth.
  bool absent_means_zero = false;
  size_t min_appearing = 10;
};

// Fills r's evidence and status; returns the keys that grew, the one with
// the largest smallest-step increase first.
std::vector<std::string> growth_with_load(const Context& ctx, const GrowthSpec& spec,
                                          NodeResult& r);

// Loads (users) where Traffic Jam found violations, or every step but the
// first when Traffic Jam is not an ancestor.
std::vector<size_t> violating_step_indexes(const Context& ctx,
                                           const std::vector<const Experiment*>& steps);

}  // namespace sonde::diagnose::heuristics
