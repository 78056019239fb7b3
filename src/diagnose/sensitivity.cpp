#include "diagnose/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>

#include "diagnose/diagnosis.hpp"
#include "diagnose/hierarchy.hpp"

namespace sonde::diagnose {
namespace {

// A case whose config is read; its records are loaded only while its
// evaluations run (the shop's 26 cases held 18.4 GB when all stayed
// resident, and the kernel killed the re-evaluation beside another).
struct CaseInput {
  size_t index;  // in the cases file, to list missing cases in its order
  std::string id;
  std::filesystem::path data_dir;
  DiagnoseConfig config;
};

// A parameter's kind as its heuristic declares it (Heuristic::
// parameter_kinds); `alpha` and undeclared parameters are thresholds.
ParameterKind kind_of(const std::string& heuristic, const std::string& parameter) {
  const auto h = heuristic_registry().find(heuristic);
  if (h == heuristic_registry().end()) return {};
  const std::map<std::string, ParameterKind> kinds = h->second->parameter_kinds();
  const auto k = kinds.find(parameter);
  return k == kinds.end() ? ParameterKind{} : k->second;
}

// Why a parameter is not varied on stored data, or "". A plan size decides
// which experiments run: stored data has the plan it was run with. A
// threshold at 0 means "no floor": scaling leaves it 0.
std::string not_varied(const ParameterKind& kind, double value) {
  if (kind.scale == ParameterKind::kPlanSize)
    return "sets the experiment plan (stored data keeps the plan it ran)";
  if (value == 0) return "0 (scaling leaves it 0)";
  return "";
}

// How a parameter of `kind` at `value` is varied. A share lives in (0, 1):
// doubling 0.5 gives 1.0, a value no data can exceed, which measures the
// bound, not the threshold's distance from the data, so its odds x/(1-x)
// are scaled instead: 0.5 -> 1/3 and 2/3, 0.05 -> 0.026 and 0.095. The
// same for a growth factor whose rule needs it above 1: Database
// Congestion's f_R 2 ("the response time doubled by queueing") at 0.5x is
// 1.0, no growth at all, so the server test is not evaluable; One Lane
// Bridge's tolerance 1.1 ("10 % above the queueing model") at 0.5x asks
// for half the model's prediction. What such a factor sets is its excess
// over 1, so that is what is scaled: 2 -> 1.5 and 3, 1.1 -> 1.05 and 1.2.
// A value outside its kind's range (a config's share of 1) is scaled
// plainly. A switch selects a rule (usually sonde's against the thesis'):
// instead of factors, each of its other settings is evaluated.
Scale scale_of(const ParameterKind& kind, double value) {
  switch (kind.scale) {
    case ParameterKind::kSwitch:
      return Scale::kSwitch;
    case ParameterKind::kShare:
      return value > 0 && value < 1 ? Scale::kOdds : Scale::kPlain;
    case ParameterKind::kGrowthFactor:
      return value > 1 ? Scale::kExcess : Scale::kPlain;
    case ParameterKind::kThreshold:
    case ParameterKind::kPlanSize:
      break;
  }
  return Scale::kPlain;
}

double scaled(double value, double factor, Scale scale) {
  switch (scale) {
    case Scale::kOdds:
      return factor * value / (1 - value + factor * value);
    case Scale::kExcess:
      return 1 + (value - 1) * factor;
    case Scale::kPlain:
    case Scale::kSwitch:
      break;
  }
  return value * factor;
}

std::map<std::string, double> node_accuracy(const AccuracyTable& t) {
  std::map<std::string, double> out;
  for (const AccuracyRow& r : t.rows) out[r.node] = r.accuracy;
  return out;
}

// The lowest balanced accuracy of any node that has one.
double worst_accuracy(const AccuracyTable& t) {
  double worst = NAN;
  for (const AccuracyRow& r : t.rows)
    if (!std::isnan(r.accuracy) && (std::isnan(worst) || r.accuracy < worst)) worst = r.accuracy;
  return worst;
}

double mean_accuracy(const AccuracyTable& t) {
  double sum = 0;
  int n = 0;
  for (const AccuracyRow& r : t.rows) {
    if (std::isnan(r.accuracy)) continue;
    sum += r.accuracy;
    ++n;
  }
  return n > 0 ? sum / n : NAN;
}

std::set<std::string> wrong_set(const AccuracyTable& t) {
  std::set<std::string> out;
  for (const AccuracyRow& r : t.rows)
    for (const std::string& w : r.wrong) out.insert(r.node + ": " + w);
  return out;
}

// The node of the tree with id `id`.
HierarchyNode* find_node(HierarchyNode& n, const std::string& id) {
  if (n.id == id) return &n;
  for (HierarchyNode& c : n.children)
    if (HierarchyNode* f = find_node(c, id)) return f;
  return nullptr;
}

bool same_accuracy(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) < 1e-9;
}

}  // namespace

const char* scale_name(Scale s) {
  switch (s) {
    case Scale::kOdds:
      return "odds";
    case Scale::kExcess:
      return "excess";
    case Scale::kSwitch:
      return "switch";
    case Scale::kPlain:
      break;
  }
  return "plain";
}

bool SensitivityRow::plateau() const {
  for (const SensitivityPoint& p : points)
    if (!p.accuracy_changes.empty()) return false;
  return true;
}

SensitivityTable parameter_sensitivity(const std::vector<ScenarioCase>& cases,
                                       const std::string& results_dir,
                                       const std::vector<double>& factors) {
  namespace fs = std::filesystem;
  SensitivityTable table;
  table.factors = factors;
  std::vector<CaseInput> inputs;
  std::vector<std::pair<size_t, std::string>> missing;  // case index, why
  for (size_t i = 0; i < cases.size(); ++i) {
    const ScenarioCase& c = cases[i];
    const fs::path dir = fs::path(results_dir) / c.id;
    if (!fs::is_directory(dir / "data" / "experiments")) {
      missing.emplace_back(i, c.id + " (no " + (dir / "data" / "experiments").string() + ")");
      continue;
    }
    nlohmann::json requirements;
    if (std::ifstream in(dir / "config.json"); in) {
      try {
        requirements = requirements_of_environment(nlohmann::json::parse(in));
      } catch (const nlohmann::json::exception& e) {
        missing.emplace_back(i,
                             c.id + " (" + (dir / "config.json").string() + ": " + e.what() + ")");
        continue;
      }
    }
    try {
      inputs.push_back({i, c.id, dir / "data",
                        parse_diagnose_config(requirements.is_null() ? nlohmann::json::object()
                                                                     : requirements)});
    } catch (const DiagnoseError& e) {
      missing.emplace_back(i, c.id + " (" + e.what() + ")");
    }
  }
  const std::string none_error = "no case of the cases file has stored data under " + results_dir +
                                 " (run scenarios/run.sh --out " + results_dir + " first)";
  if (inputs.empty()) throw DiagnoseError(none_error);

  // The plan: every row and point, each point with the change of the
  // config it is evaluated at; change 0 is none (1x). Made from the config
  // of the first case whose records load, before any case is evaluated.
  using Change = std::function<void(DiagnoseConfig&)>;
  std::vector<Change> changes = {[](DiagnoseConfig&) {}};
  struct PointAt {
    size_t row, point, change;
  };
  std::vector<PointAt> planned;
  auto plan = [&](SensitivityRow row, const ParameterKind& kind,
                  const std::function<Change(double)>& at) {
    row.scale = scale_of(kind, row.value);
    auto add = [&](SensitivityPoint p) {
      changes.push_back(at(p.value));
      planned.push_back({table.rows.size(), row.points.size(), changes.size() - 1});
      row.points.push_back(std::move(p));
    };
    if (row.scale == Scale::kSwitch) {
      for (int i = 0; i < kind.settings; ++i) {
        const double setting = i;
        if (setting == row.value) continue;
        SensitivityPoint p;
        p.factor = NAN;
        p.value = setting;
        add(std::move(p));
      }
    } else {
      row.not_scaled = not_varied(kind, row.value);
      if (row.not_scaled.empty())
        for (double f : factors) {
          SensitivityPoint p;
          p.factor = f;
          p.value = scaled(row.value, f, row.scale);
          add(std::move(p));
        }
    }
    table.rows.push_back(std::move(row));
  };
  auto build_plan = [&](const DiagnoseConfig& first) {
    // The settings every node shares.
    {
      SensitivityRow row;
      row.node = "*";
      row.parameter = "alpha";
      row.value = first.settings.alpha;
      plan(std::move(row), ParameterKind{},
           [](double v) { return [v](DiagnoseConfig& c) { c.settings.alpha = v; }; });
    }
    // Every parameter of every node, in tree order.
    std::vector<const HierarchyNode*> order;
    std::function<void(const HierarchyNode&)> walk = [&](const HierarchyNode& n) {
      order.push_back(&n);
      for (const HierarchyNode& c : n.children) walk(c);
    };
    walk(first.root);
    for (const HierarchyNode* n : order) {
      std::map<std::string, double> params = heuristic_registry().at(n->heuristic)->defaults();
      for (const auto& [k, v] : n->params) params[k] = v;
      for (const auto& [name, value] : params) {
        SensitivityRow row;
        row.node = n->id;
        row.parameter = name;
        row.value = value;
        const std::string id = n->id;
        const std::string key = name;
        plan(std::move(row), kind_of(n->heuristic, name), [id, key](double v) {
          return [id, key, v](DiagnoseConfig& c) {
            if (HierarchyNode* node = find_node(c.root, id)) node->params[key] = v;
          };
        });
      }
    }
  };

  // One case at a time: load its records, evaluate every change, keep only
  // the node statuses.
  std::vector<std::map<std::string, NodeStatuses>> statuses;
  for (const CaseInput& c : inputs) {
    ExperimentData data;
    try {
      data = load_experiment_data(c.data_dir.string());
    } catch (const DiagnoseError& e) {
      missing.emplace_back(c.index, c.id + " (" + e.what() + ")");
      continue;
    }
    if (table.cases++ == 0) {
      build_plan(c.config);
      statuses.resize(changes.size());
    }
    for (size_t k = 0; k < changes.size(); ++k) {
      DiagnoseConfig config = c.config;
      changes[k](config);
      statuses[k][c.id] = node_statuses(run_diagnosis(data, config));
    }
    for (const Experiment& e : data.experiments) forget_experiment(e);
  }
  std::stable_sort(missing.begin(), missing.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [index, why] : missing) table.missing.push_back(std::move(why));
  if (table.cases == 0) throw DiagnoseError(none_error);

  const AccuracyTable base = score_statuses(cases, statuses[0]);
  table.baseline_wrong = wrong_labels(base);
  table.baseline_accuracy = mean_accuracy(base);
  table.baseline_worst_accuracy = worst_accuracy(base);
  table.baseline_node_accuracy = node_accuracy(base);
  const std::set<std::string> base_wrong = wrong_set(base);
  table.baseline_wrong_labels.assign(base_wrong.begin(), base_wrong.end());

  for (const PointAt& at : planned) {
    SensitivityPoint& p = table.rows[at.row].points[at.point];
    const AccuracyTable t = score_statuses(cases, statuses[at.change]);
    p.wrong = wrong_labels(t);
    p.mean_accuracy = mean_accuracy(t);
    p.worst_accuracy = worst_accuracy(t);
    p.node_accuracy = node_accuracy(t);
    const std::set<std::string> w = wrong_set(t);
    for (const std::string& x : w)
      if (!base_wrong.count(x)) p.changed.push_back("+" + x);
    for (const std::string& x : base_wrong)
      if (!w.count(x)) p.changed.push_back("-" + x);
    for (const auto& [node, a] : p.node_accuracy) {
      const auto at_1x = table.baseline_node_accuracy.find(node);
      const double before = at_1x == table.baseline_node_accuracy.end() ? NAN : at_1x->second;
      if (same_accuracy(before, a)) continue;
      p.accuracy_changes.push_back(node + " " + accuracy_text(before) + " -> " + accuracy_text(a));
      if (std::isnan(a) || std::isnan(before)) {
        p.largest_drop = std::max(p.largest_drop, 0.5);
      } else {
        p.largest_drop = std::max(p.largest_drop, before - a);
        p.largest_rise = std::max(p.largest_rise, a - before);
      }
    }
  }
  return table;
}

}  // namespace sonde::diagnose
