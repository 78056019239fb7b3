// `sonde diagnose --config FILE --out DIR`: runs the experiments the
// measurement-environment config lists against the system under test
// (docs/diagnose/config.md), keeping their data in DIR/data, then evaluates
// them. `sonde diagnose --data DIR --out DIR2` evaluates an existing
// experiment-data directory (docs/diagnose/experiment-data.md). Both write
// report.json, report.html and a summary against the problem hierarchy.
#include <iostream>

#include "cli/command.hpp"
#include "cli/diagnose_run.hpp"
#include "diagnose/hierarchy.hpp"

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
  if (o.print_default) {
    std::cout << diagnose::default_config_json().dump(2) << "\n";
    return 0;
  }
  if (o.out.empty() || o.data.empty() == o.config.empty()) {
    std::cerr << "sonde diagnose: give --out and either --config (run experiments) or --data "
                 "(evaluate recorded ones)\n";
    return 2;
  }
  return o.config.empty() ? evaluate_experiments(o.data, o.out, o.hierarchy, nlohmann::json())
                          : diagnose_with_config(o.config, o.out, o.hierarchy);
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
