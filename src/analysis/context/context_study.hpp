// The random partial-instrumentation study of seed 000 (Section 5, Figs. 8
// and 9): how many caller/stack/trace contexts, and how much σ reduction,
// a partial instrumentation would give.
//
// A partial instrumentation (a subset S of the operations) is simulated by
// projecting every fully monitored trace onto S: executions of operations
// outside S vanish and their children attach to the nearest ancestor in S
// (a trace may become a forest; its roots have caller `$`); traces with no
// execution in S vanish. Response times are unchanged (each execution's own
// probes measure it). Because projection only depends on the call-tree
// shape, it runs once per distinct shape on the per-position moments
// (ContextData::shapes), never per trace: cost ∝ subsets × Σ shape sizes.
//
// σ and the reduction are exactly those of summarize_levels (population σ,
// execution-weighted), computed from merged moments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/context/context_data.hpp"

namespace sonde::analysis {

struct ProjectionResult {
  uint64_t executions = 0;
  uint64_t traces = 0;
  std::array<size_t, kContextLevels> contexts{};           // by ContextLevel
  std::array<double, kContextLevels> weighted_sd{};        // ns
  std::array<double, kContextLevels> reduction_percent{};  // against kOperation
};

// The contexts and σ reductions if only the operations with
// monitored[op] == true had been instrumented.
ProjectionResult project_instrumentation(const ContextData& data,
                                         const std::vector<bool>& monitored);

struct StudyRow {
  size_t monitoring_points = 0;  // |S|
  size_t run = 0;                // 0 .. runs-1 for this |S|
  ProjectionResult result;
};

// For every |S| = 1 .. operations, `runs` subsets drawn uniformly (a seeded
// partial Fisher-Yates shuffle over mt19937_64, whose output the standard
// fixes; no std distribution, whose algorithms are not), so the rows are the
// same on every platform for a seed. Rows are ordered by |S|, then run.
std::vector<StudyRow> run_study(const ContextData& data, size_t runs, uint64_t seed);

std::string study_csv(const std::vector<StudyRow>& rows);
// Two panels against |S|: contexts per level (Fig. 8) and σ reduction per
// level (Fig. 9), every run as a dot and the median per |S| as a line.
std::string study_svg(const std::vector<StudyRow>& rows, const std::string& title);

}  // namespace sonde::analysis
