// The two halves of `sonde diagnose`, shared with `sonde demo`: run the
// experiments a measurement-environment config lists, and evaluate
// experiment data against the problem hierarchy. Both print what went wrong
// and return the command's exit status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sonde::cli {

// Evaluates `data_dir`, writes report.json/report.html to `out` and prints
// the summary. `hierarchy`: a hierarchy file, or "" for the built-in one
// with `requirements` (hierarchy-config JSON: requirement, services) if not
// null. Returns 0, 3 (incomplete run) or 1.
int evaluate_experiments(const std::string& data_dir, const std::string& out,
                         const std::string& hierarchy, const nlohmann::json& requirements);

// Runs the config's experiments into `out`/data, then evaluate_experiments
// with the config's requirements.
int diagnose_with_config(const std::string& config, const std::string& out,
                         const std::string& hierarchy);

}  // namespace sonde::cli
