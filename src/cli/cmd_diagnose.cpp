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
#include "diagnose/scenario_accuracy.hpp"

namespace sonde::cli {
namespace {

struct DiagnoseOptions {
  std::string config;
  std::string data;
  std::string out;
  std::string hierarchy;
  std::string accuracy;  // scenario cases file
  bool print_default = false;
};

// `--accuracy CASES --out RESULTS`: the scenario suite's table
// (scenarios/README.md). Exit 0 when every case was scored and nothing was
// misclassified, 4 otherwise (so scripts and CI can gate on it), 1 bad input.
int print_accuracy(const DiagnoseOptions& o) {
  try {
    const auto cases = diagnose::load_scenario_cases(o.accuracy);
    const diagnose::AccuracyTable table = diagnose::score_scenarios(cases, o.out);
    std::cout << diagnose::format_accuracy(table);
    bool perfect = table.missing.empty();
    for (const auto& row : table.rows) perfect = perfect && row.wrong.empty();
    return perfect ? 0 : 4;
  } catch (const diagnose::DiagnoseError& e) {
    std::cerr << "sonde diagnose: " << e.what() << "\n";
    return 1;
  }
}

int run_diagnose(const DiagnoseOptions& o) {
  if (o.print_default) {
    std::cout << diagnose::default_config_json().dump(2) << "\n";
    return 0;
  }
  if (!o.accuracy.empty()) {
    if (o.out.empty() || !o.data.empty() || !o.config.empty()) {
      std::cerr << "sonde diagnose: --accuracy CASES needs --out RESULTS (the directory with "
                   "one diagnosis per case) and neither --config nor --data\n";
      return 2;
    }
    return print_accuracy(o);
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
                app.add_option("--accuracy", o->accuracy,
                               "scenario cases file (scenarios/cases.txt): print the accuracy "
                               "table of the diagnoses in OUT/<case>/ (exit 4 if any is wrong)");
                app.add_flag("--print-default-hierarchy", o->print_default,
                             "print the built-in configuration and exit");
                app.callback([o, &exit_code] { exit_code = run_diagnose(*o); });
              });

}  // namespace sonde::cli
