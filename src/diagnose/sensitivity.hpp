// Parameter sensitivity (issue 22, docs/diagnose/parameters.md): the
// scenario suite's accuracy when one parameter of one node is scaled (by
// default to 0.5x and 2x of its value), every other parameter at its value.
// It re-evaluates the stored experiment data of each case
// (RESULTS/<id>/data, the requirements of RESULTS/<id>/config.json), so it
// measures the decision rules, not new runs: a re-evaluation of stored
// data, labelled as such wherever it is reported.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/scenario_accuracy.hpp"

namespace sonde::diagnose {

// How a parameter is varied.
enum class Scale {
  kPlain,   // value x factor
  kOdds,    // a share in (0, 1): the factor scales its odds x/(1-x)
  kExcess,  // a growth factor whose rule needs it above 1: 1 + (x-1) x factor
  kSwitch,  // a rule selector: each of its other settings, no factor
};
const char* scale_name(Scale s);

struct SensitivityPoint {
  double factor = 1;  // NaN for a switch's setting
  double value = 0;   // the parameter's value at this point
  int wrong = 0;      // wrong labels over the suite
  double mean_accuracy = 0;
  // The suite's accuracy as the thesis scores it: the balanced accuracy of
  // each labelled node (a node labelled in one class only gets that class's
  // rate: r_tp, or 1 - r_fp; scenario_accuracy.hpp), and the lowest of them.
  std::map<std::string, double> node_accuracy;
  double worst_accuracy = 0;
  std::vector<std::string> changed;  // labels wrong here and right at 1x, or the reverse ("+"/"-")
  std::vector<std::string> accuracy_changes;  // "node 1.000 -> 0.750", against 1x
  // The largest fall and rise of any node's balanced accuracy against 1x;
  // a node scored at only one of the two falls by 0.5 (the plot's colour).
  double largest_drop = 0, largest_rise = 0;
};

struct SensitivityRow {
  std::string node;        // hierarchy node id; "*" for a setting of every node
  std::string parameter;   // as defaults() or Settings spell it
  double value = 0;        // at 1x
  std::string not_scaled;  // why it is not varied (plan size, zero); empty: varied
  Scale scale = Scale::kPlain;
  std::vector<SensitivityPoint> points;
  // No node's balanced accuracy differs from 1x at any point.
  bool plateau() const;
};

struct SensitivityTable {
  std::vector<double> factors;
  int baseline_wrong = 0;
  double baseline_accuracy = 0;
  double baseline_worst_accuracy = 0;
  std::map<std::string, double> baseline_node_accuracy;
  std::vector<std::string> baseline_wrong_labels;
  int cases = 0;                     // scored
  std::vector<std::string> missing;  // cases without data (named, with why)
  std::vector<SensitivityRow> rows;
};

// Plans every parameter's points, then loads one case's stored data at a
// time, re-evaluates the whole hierarchy at each point and drops the
// case's records before the next (memory is bounded by the largest case,
// not the suite). Throws DiagnoseError when no case has data.
SensitivityTable parameter_sensitivity(const std::vector<ScenarioCase>& cases,
                                       const std::string& results_dir,
                                       const std::vector<double>& factors);

// The text, JSON and plot below are in sensitivity_report.cpp.
std::string format_sensitivity(const SensitivityTable& table);
nlohmann::json sensitivity_json(const SensitivityTable& table);
// A heat map of the lowest per-node balanced accuracy per parameter and
// factor, switches below with each of their settings (SVG).
std::string sensitivity_svg(const SensitivityTable& table);

}  // namespace sonde::diagnose
