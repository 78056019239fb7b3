// The scenario suite's scoring (scenarios/README.md): labelled cases (which
// hierarchy nodes must and must not be detected) against the report.json of
// each case's diagnosis, as the thesis' accuracy table (Wert, Eqs. 6.1-6.18):
// per node r_tp = tp / positives, r_fp = fp / negatives and the balanced
// accuracy a = (1 + r_tp - r_fp) / 2.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnose/experiment_data.hpp"
#include "diagnose/heuristic.hpp"

namespace sonde::diagnose {

struct ScenarioCase {
  std::string id;  // also the case's directory under the results
  std::string title;
  std::vector<std::string> shop_flags;    // without "--"
  std::set<std::string> must;             // node ids that must be detected
  std::set<std::string> must_not;         // node ids that must not be detected
  std::vector<std::string> demo_options;  // extra `sonde demo` arguments (optional 6th field)
};

// Reads a cases file: one case per line, `id | title | shop flags | must |
// must not [| demo options]`, words separated by spaces, "-" for none, '#'
// comments.
// Throws DiagnoseError naming file and line.
std::vector<ScenarioCase> load_scenario_cases(const std::string& path);

struct AccuracyRow {
  std::string node;
  int positives = 0, negatives = 0, tp = 0, fp = 0;
  double r_tp = 0, r_fp = 0, accuracy = 0;  // NaN parts when a class is empty
  std::vector<std::string> wrong;           // "tc17 (missed: skipped)" / "tc03 (false alarm)"
};

struct AccuracyTable {
  std::vector<AccuracyRow> rows;        // one per labelled node, in first-label order
  std::vector<std::string> missing;     // cases without a readable report.json (named, with why)
  std::vector<std::string> incomplete;  // cases whose run was incomplete
};

// Node id -> status name ("detected", "not_detected", ...), whole tree.
using NodeStatuses = std::map<std::string, std::string>;
NodeStatuses node_statuses(const NodeResult& root);

// Scores the cases that have statuses (case id -> its tree's statuses).
AccuracyTable score_statuses(const std::vector<ScenarioCase>& cases,
                             const std::map<std::string, NodeStatuses>& statuses);

// Wrong labels over the table: misses plus false alarms.
int wrong_labels(const AccuracyTable& table);

// Scores every case whose `results_dir/<id>/report.json` exists.
AccuracyTable score_scenarios(const std::vector<ScenarioCase>& cases,
                              const std::string& results_dir);

// A balanced accuracy as every table prints it: "0.875", "-" for none.
std::string accuracy_text(double a);

// The table as text, thesis style.
std::string format_accuracy(const AccuracyTable& table);

// Repeated fresh runs of the suite (scenarios/run.sh --repeat N: one
// results folder per repetition): per node the mean and the worst balanced
// accuracy over the repetitions and the wrong labels of each, as text.
std::string format_repeated_accuracy(const std::vector<std::string>& names,
                                     const std::vector<AccuracyTable>& tables);

}  // namespace sonde::diagnose
