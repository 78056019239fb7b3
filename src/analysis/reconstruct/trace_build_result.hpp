// What a trace buffer produces when closed: the reconstructed trace and the
// problems found on the way. Valid iff there are no problems.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"

namespace sonde::analysis {

struct TraceBuildResult {
  Trace trace;
  std::vector<TraceProblem> problems;

  bool valid() const { return problems.empty(); }
};

// A broken trace can yield one problem per event; past this many, the rest
// are summarised in one line so that a corrupt log cannot blow up memory.
inline constexpr size_t kMaxProblemsPerTrace = 16;

inline void add_problem(std::vector<TraceProblem>& problems, TraceProblemKind kind,
                        std::string detail) {
  if (problems.size() < kMaxProblemsPerTrace) {
    problems.push_back({kind, std::move(detail)});
  } else if (problems.size() == kMaxProblemsPerTrace) {
    problems.push_back({kind, "further problems not listed"});
  }
}

}  // namespace sonde::analysis
