// `sonde diagnose --config FILE --out DIR`: runs the experiments the
// measurement-environment config lists against the system under test
// (docs/diagnose/config.md), keeping their data in DIR/data, then evaluates
// them. `sonde diagnose --data DIR --out DIR2` evaluates an existing
// experiment-data directory (docs/diagnose/experiment-data.md). Both write
// report.json, report.html and a summary against the problem hierarchy.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "cli/diagnose_run.hpp"
#include "diagnose/hierarchy.hpp"
#include "diagnose/scenario_accuracy.hpp"
#include "diagnose/sensitivity.hpp"

namespace sonde::cli {
namespace {

struct DiagnoseOptions {
  std::string config;
  std::string data;
  std::string out;
  std::string hierarchy;
  std::string accuracy;     // scenario cases file
  std::string sensitivity;  // scenario cases file
  std::vector<double> factors = {0.5, 2};
  bool repetitions = false;  // --accuracy over OUT/rep1..N
  bool print_default = false;
};

// `--accuracy CASES --out RESULTS`: the scenario suite's table
// (scenarios/README.md). Exit 0 when every case was scored and nothing was
// misclassified, 4 otherwise (so scripts and CI can gate on it), 1 bad input.
int print_accuracy(const DiagnoseOptions& o) {
  try {
    const auto cases = diagnose::load_scenario_cases(o.accuracy);
    bool perfect = true;
    if (o.repetitions) {
      // Every OUT/repN folder, in the order of N (scenarios/run.sh --repeat N
      // writes rep1..N; a kept series, scenarios/keep_labels.py, may start
      // later when an earlier repetition's folders were not kept).
      std::map<int, std::string> numbered;
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(o.out, ec)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_directory() || name.size() < 4 || name.compare(0, 3, "rep") != 0 ||
            name.size() > 12 ||
            !std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
          continue;
        numbered[std::stoi(name.substr(3))] = name;
      }
      std::vector<std::string> names;
      for (const auto& [k, name] : numbered) names.push_back(name);
      if (names.empty()) {
        std::cerr << "sonde diagnose: --repetitions: no " << o.out
                  << "/repN folder (scenarios/run.sh "
                  << "--repeat N writes rep1..N)\n";
        return 1;
      }
      std::vector<diagnose::AccuracyTable> tables;
      for (const std::string& n : names) {
        tables.push_back(diagnose::score_scenarios(cases, o.out + "/" + n));
        perfect =
            perfect && tables.back().missing.empty() && diagnose::wrong_labels(tables.back()) == 0;
      }
      std::cout << diagnose::format_repeated_accuracy(names, tables);
      return perfect ? 0 : 4;
    }
    const diagnose::AccuracyTable table = diagnose::score_scenarios(cases, o.out);
    std::cout << diagnose::format_accuracy(table);
    perfect = table.missing.empty();
    for (const auto& row : table.rows) perfect = perfect && row.wrong.empty();
    return perfect ? 0 : 4;
  } catch (const diagnose::DiagnoseError& e) {
    std::cerr << "sonde diagnose: " << e.what() << "\n";
    return 1;
  }
}

// `--sensitivity CASES --out RESULTS`: every parameter scaled by each
// factor (a share's odds, so it stays in (0, 1); a growth factor's excess
// over 1) and every switch at its other settings, the suite re-evaluated
// from its stored data and scored per node; the table on stdout,
// RESULTS/sensitivity.json and RESULTS/sensitivity.svg.
int print_sensitivity(const DiagnoseOptions& o) {
  try {
    const auto cases = diagnose::load_scenario_cases(o.sensitivity);
    const diagnose::SensitivityTable table =
        diagnose::parameter_sensitivity(cases, o.out, o.factors);
    std::cout << diagnose::format_sensitivity(table);
    for (const auto& [name, text] :
         {std::pair<std::string, std::string>{"sensitivity.json",
                                              diagnose::sensitivity_json(table).dump(2) + "\n"},
          {"sensitivity.svg", diagnose::sensitivity_svg(table)}}) {
      const std::string path = o.out + "/" + name;
      std::ofstream f(path);
      f << text;
      if (!f.flush()) {
        std::cerr << "sonde diagnose: cannot write " << path << "\n";
        return 1;
      }
      std::cout << "written: " << path << "\n";
    }
    return 0;
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
  if (!o.sensitivity.empty()) {
    if (o.out.empty() || !o.data.empty() || !o.config.empty() || !o.accuracy.empty()) {
      std::cerr << "sonde diagnose: --sensitivity CASES needs --out RESULTS (the directory with "
                   "one stored run per case) and neither --config, --data nor --accuracy\n";
      return 2;
    }
    for (double f : o.factors) {
      if (!(f > 0) || !std::isfinite(f)) {
        std::cerr << "sonde diagnose: --factors must be positive numbers\n";
        return 2;
      }
    }
    return print_sensitivity(o);
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

SONDE_COMMAND(
    "diagnose", "Find performance antipatterns in experiment data (see docs/diagnose/)",
    [](CLI::App& app, int& exit_code) {
      auto o = std::make_shared<DiagnoseOptions>();
      app.add_option("--config", o->config,
                     "measurement-environment config (JSON, docs/diagnose/config.md): "
                     "run its experiments first, data in OUT/data");
      app.add_option("--data", o->data, "experiment-data directory (run.json, experiments/)");
      app.add_option("--out", o->out, "directory for report.json and report.html");
      app.add_option("--hierarchy", o->hierarchy,
                     "problem hierarchy / requirements config (JSON, docs/diagnose/hierarchy.md)");
      app.add_option("--accuracy", o->accuracy,
                     "scenario cases file (scenarios/cases.txt): print the accuracy "
                     "table of the diagnoses in OUT/<case>/ (exit 4 if any is wrong)");
      app.add_flag("--repetitions", o->repetitions,
                   "with --accuracy: OUT holds one results folder per repetition (rep1, rep2, "
                   "...; scenarios/run.sh --repeat N): mean and worst accuracy per node");
      app.add_option("--sensitivity", o->sensitivity,
                     "scenario cases file: re-evaluate the stored runs in OUT/<case>/ "
                     "with each parameter scaled by --factors (shares: their odds; growth "
                     "factors: their excess over 1) and each switch at its other settings; "
                     "docs/diagnose/parameters.md");
      app.add_option("--factors", o->factors, "the factors of --sensitivity (default 0.5 2)")
          ->delimiter(',');
      app.add_flag("--print-default-hierarchy", o->print_default,
                   "print the built-in configuration and exit");
      app.callback([o, &exit_code] { exit_code = run_diagnose(*o); });
    });

}  // namespace sonde::cli
