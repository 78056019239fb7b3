// `sonde diagnose --config FILE --out DIR`: runs the experiments the
// measurement-environment config lists against the system under test
// (docs/diagnose/config.md), keeping their data in DIR/data, then evaluates
// them. `sonde diagnose --data DIR --out DIR2` evaluates an existing
// experiment-data directory (docs/diagnose/experiment-data.md). Both write
// report.json, report.html and a summary against the problem hierarchy.
#include <iostream>

#include "cli/command.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/engine/config.hpp"
#include "diagnose/engine/engine.hpp"
#include "diagnose/load/profile.hpp"
#include "diagnose/report.hpp"

namespace sonde::cli {
namespace {

struct DiagnoseOptions {
  std::string config;
  std::string data;
  std::string out;
  std::string hierarchy;
  bool print_default = false;
};

int run_diagnose(const DiagnoseOptions& o) {
  using namespace sonde::diagnose;
  if (o.print_default) {
    std::cout << default_config_json().dump(2) << "\n";
    return 0;
  }
  if (o.out.empty() || o.data.empty() == o.config.empty()) {
    std::cerr << "sonde diagnose: give --out and either --config (run experiments) or --data "
                 "(evaluate recorded ones)\n";
    return 2;
  }
  std::string data_dir = o.data;
  // The environment's requirements are the diagnosis' requirements, unless
  // a --hierarchy file says otherwise.
  nlohmann::json env_requirements;
  if (!o.config.empty()) {
    try {
      const engine::EnvironmentConfig env = engine::EnvironmentConfig::load(o.config);
      if (const auto r = env.raw.find("requirements"); r != env.raw.end() && r->is_object()) {
        env_requirements = nlohmann::json::object();
        if (r->contains("default")) env_requirements["requirement"] = (*r)["default"];
        if (r->contains("services")) env_requirements["services"] = (*r)["services"];
      }
      const auto plans = engine::plan_from_config(env);
      if (plans.empty()) {
        std::cerr << "sonde diagnose: " << o.config
                  << ": config key 'experiments' lists nothing to run (docs/diagnose/config.md)\n";
        return 1;
      }
      data_dir = o.out + "/data";
      engine::Engine e(env, data_dir);
      engine::cancel_on_signals(e);
      e.expect_total(plans);
      if (!e.run_all(plans)) std::cerr << "sonde diagnose: experiments stopped: " << e.reason() << "\n";
      e.finish();
    } catch (const std::runtime_error& e) {  // ConfigError, ProfileError, SutError
      std::cerr << "sonde diagnose: " << e.what() << "\n";
      return 1;
    }
  }
  try {
    const DiagnoseConfig config = o.hierarchy.empty() && env_requirements.is_null()
                                      ? parse_diagnose_config(nlohmann::json::object())
                                  : o.hierarchy.empty()
                                      ? parse_diagnose_config(env_requirements)
                                      : load_diagnose_config(o.hierarchy);
    const ExperimentData data = load_experiment_data(data_dir);
    const NodeResult root = run_diagnosis(data, config);
    const ReportMeta meta = report_meta(data);
    write_report(root, meta, o.out);
    std::cout << report_summary(root, meta) << "report: " << o.out << "/report.html\n";
    return meta.complete ? 0 : 3;
  } catch (const DiagnoseError& e) {
    std::cerr << "sonde diagnose: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

SONDE_COMMAND("diagnose", "Find performance antipatterns in experiment data (see docs/diagnose/)",
              [](CLI::App& app, int& exit_code) {
                auto o = std::make_shared<DiagnoseOptions>();
                app.add_option("--config", o->config,
                               "measurement-environment config (JSON, docs/diagnose/config.md): "
                               "run its experiments first, data in OUT/data");
                app.add_option("--data", o->data,
                               "experiment-data directory (run.json, experiments/)");
                app.add_option("--out", o->out, "directory for report.json and report.html");
                app.add_option(
                    "--hierarchy", o->hierarchy,
                    "problem hierarchy / requirements config (JSON, docs/diagnose/hierarchy.md)");
                app.add_flag("--print-default-hierarchy", o->print_default,
                             "print the built-in configuration and exit");
                app.callback([o, &exit_code] { exit_code = run_diagnose(*o); });
              });

}  // namespace sonde::cli
