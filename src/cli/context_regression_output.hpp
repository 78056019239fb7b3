// `sonde context LOG --baseline MODEL`: the regression report as a table
// and as JSON (docs/analysis/context.md, "Baseline and regression check").
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/context/context_baseline.hpp"
#include "analysis/context/context_regression.hpp"

namespace sonde::cli {

nlohmann::json regression_json(const analysis::ContextBaseline& baseline,
                               const analysis::RegressionReport& report);

// `limit` rows of changed contexts at most (0: all), then the summary lines.
void print_regression(std::ostream& out, const analysis::ContextBaseline& baseline,
                      const analysis::RegressionReport& report, size_t limit);

}  // namespace sonde::cli
