// `sonde diagnose --data DIR --out DIR2`: evaluates an existing
// experiment-data directory (docs/diagnose/experiment-data.md) against the
// problem hierarchy and writes report.json, report.html and a summary.
#include <iostream>

#include "cli/command.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/report.hpp"

namespace sonde::cli {
namespace {

struct DiagnoseOptions {
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
  if (o.data.empty() || o.out.empty()) {
    std::cerr << "sonde diagnose: --data and --out are required\n";
    return 2;
  }
  try {
    const DiagnoseConfig config = o.hierarchy.empty()
                                      ? parse_diagnose_config(nlohmann::json::object())
                                      : load_diagnose_config(o.hierarchy);
    const ExperimentData data = load_experiment_data(o.data);
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
