// One value per experiment, computed once until forget_experiment
// (experiment_data.hpp): several heuristics read the same derived data of
// an experiment (its request attribution, its database-call time, its
// inside/outside split).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "diagnose/experiment_data.hpp"

namespace sonde::diagnose::heuristics {

// `compute()` runs outside the lock (it may itself read other cached values);
// should two threads compute the same experiment, the first stored wins.
// One cache per call site (each lambda is its own type).
template <class T, class Compute>
const T& per_experiment(const Experiment& e, Compute compute) {
  static std::mutex mutex;
  static std::map<std::string, T> cache;
  static const bool registered = register_dir_cache(mutex, cache);
  (void)registered;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(e.dir);
    if (it != cache.end()) return it->second;
  }
  T value = compute();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.try_emplace(e.dir, std::move(value)).first->second;
}

}  // namespace sonde::diagnose::heuristics
