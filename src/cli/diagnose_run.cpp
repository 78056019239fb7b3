#include "cli/diagnose_run.hpp"

#include <iostream>

#include "diagnose/diagnosis.hpp"
#include "diagnose/engine/config.hpp"
#include "diagnose/engine/engine.hpp"
#include "diagnose/engine/search.hpp"
#include "diagnose/hierarchy.hpp"
#include "diagnose/report.hpp"

namespace sonde::cli {
namespace {

// The hierarchy file's config, else the requirements (of the environment
// config), else the defaults.
diagnose::DiagnoseConfig diagnose_config(const std::string& hierarchy,
                                         const nlohmann::json& requirements) {
  using namespace sonde::diagnose;
  if (!hierarchy.empty()) return load_diagnose_config(hierarchy);
  return parse_diagnose_config(requirements.is_null() ? nlohmann::json::object() : requirements);
}

}  // namespace

int evaluate_experiments(const std::string& data_dir, const std::string& out,
                         const std::string& hierarchy, const nlohmann::json& requirements) {
  using namespace sonde::diagnose;
  try {
    const DiagnoseConfig config = diagnose_config(hierarchy, requirements);
    const ExperimentData data = load_experiment_data(data_dir);
    const NodeResult root = run_diagnosis(data, config);
    const ReportMeta meta = report_meta(data, config.settings);
    write_report(root, meta, out);
    std::cout << report_summary(root, meta) << "report: " << out << "/report.html\n";
    return meta.complete ? 0 : 3;
  } catch (const DiagnoseError& e) {
    std::cerr << "sonde diagnose: " << e.what() << "\n";
    return 1;
  }
}

int diagnose_with_config(const std::string& config, const std::string& out,
                         const std::string& hierarchy) {
  namespace engine = diagnose::engine;
  // The environment's requirements are the diagnosis' requirements, unless
  // a hierarchy file says otherwise.
  nlohmann::json requirements;
  const std::string data_dir = out + "/data";
  try {
    const engine::EnvironmentConfig env = engine::EnvironmentConfig::load(config);
    requirements = diagnose::requirements_of_environment(env.raw);
    // The config's own plan runs first, then the diagnosis; without one,
    // the systematic search runs each level's experiments once reached.
    std::vector<engine::SeriesPlan> plans;
    if (env.raw.contains("experiments")) {
      plans = engine::plan_from_config(env);
      if (plans.empty()) {
        std::cerr << "sonde diagnose: " << config
                  << ": config key 'experiments' lists nothing to run (docs/diagnose/config.md)\n";
        return 1;
      }
    }
    const diagnose::DiagnoseConfig search = diagnose_config(hierarchy, requirements);
    engine::Engine e(env, data_dir);
    engine::cancel_on_signals(e);
    bool ok = true;
    if (!plans.empty()) {
      ok = e.run_all(plans);  // its ETA covers the whole plan
    } else {
      ok = engine::run_search(e, env, search, data_dir);
    }
    if (!ok) std::cerr << "sonde diagnose: experiments stopped: " << e.reason() << "\n";
    e.finish();
  } catch (const std::runtime_error& e) {  // ConfigError, ProfileError, SutError
    std::cerr << "sonde diagnose: " << e.what() << "\n";
    return 1;
  }
  return evaluate_experiments(data_dir, out, hierarchy, requirements);
}

}  // namespace sonde::cli
