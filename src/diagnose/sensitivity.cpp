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

std::string short_number(double v) {
  std::ostringstream s;
  s << std::setprecision(4) << v;
  return s.str();
}

std::string accuracy_text(double a) {
  if (std::isnan(a)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << a;
  return s.str();
}

bool same_accuracy(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::abs(a - b) < 1e-9;
}

// How a point is named in the text and the plot: "0.5x", or "=2" for a
// switch's setting.
std::string point_label(const SensitivityPoint& p) {
  return std::isnan(p.factor) ? "=" + short_number(p.value) : short_number(p.factor) + "x";
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

namespace {

// "0.938 (2)": the lowest per-node balanced accuracy and the wrong labels.
std::string cell_text(double worst, int wrong) {
  return accuracy_text(worst) + " (" + std::to_string(wrong) + ")";
}

std::string value_text(const SensitivityRow& r) {
  const std::string v = short_number(r.value);
  if (r.scale == Scale::kOdds) return v + "*";
  if (r.scale == Scale::kExcess) return v + "+";
  return v;
}

// What changes at a point, against 1x: the nodes' accuracies, then labels.
std::string changes_text(const SensitivityRow& r) {
  std::string out;
  for (const SensitivityPoint& p : r.points) {
    if (p.accuracy_changes.empty() && p.changed.empty()) continue;
    std::string part;
    for (const std::string& c : p.accuracy_changes) part += (part.empty() ? "" : ", ") + c;
    for (const std::string& c : p.changed) part += (part.empty() ? "" : ", ") + c;
    out += (out.empty() ? "" : "; ") + point_label(p) + ": " + part;
  }
  return out;
}

}  // namespace

std::string format_sensitivity(const SensitivityTable& t) {
  std::ostringstream out;
  out << "Parameter sensitivity: re-evaluation of stored data (" << t.cases
      << " cases). Each cell: the lowest balanced accuracy of any labelled node, and in brackets "
         "the wrong labels (misses + false alarms). At 1x: "
      << cell_text(t.baseline_worst_accuracy, t.baseline_wrong) << ", mean balanced accuracy "
      << accuracy_text(t.baseline_accuracy) << "\n";
  out << std::left << std::setw(36) << "node" << std::setw(26) << "parameter" << std::right
      << std::setw(10) << "value";
  for (double f : t.factors) out << std::setw(13) << (short_number(f) + "x");
  out << "  what changes against 1x\n";
  int varied = 0, plateaus = 0;
  std::vector<const SensitivityRow*> switches;
  for (const SensitivityRow& r : t.rows) {
    if (r.scale == Scale::kSwitch) {
      switches.push_back(&r);
      continue;
    }
    out << std::left << std::setw(36) << r.node << std::setw(26) << r.parameter << std::right
        << std::setw(10) << value_text(r);
    if (!r.not_scaled.empty()) {
      out << "  not varied: " << r.not_scaled << "\n";
      continue;
    }
    ++varied;
    plateaus += r.plateau();
    for (const SensitivityPoint& p : r.points)
      out << std::setw(13) << cell_text(p.worst_accuracy, p.wrong);
    out << "  " << changes_text(r) << "\n";
  }
  out << "* a share: the factor scales its odds x/(1-x), so it stays in (0, 1)\n"
         "+ a growth factor whose rule needs it above 1: the factor scales its excess over 1\n";
  out << varied << " parameters varied, " << plateaus
      << " on a plateau (no node's balanced accuracy changes at any factor)\n";
  if (!switches.empty()) {
    out << "\nSwitches (each other setting; the thesis' rule is the setting 0 unless the "
           "parameter table says otherwise):\n";
    for (const SensitivityRow* r : switches) {
      out << std::left << std::setw(36) << r->node << std::setw(26) << r->parameter << std::right
          << std::setw(10) << short_number(r->value);
      for (const SensitivityPoint& p : r->points)
        out << "  " << point_label(p) << " " << cell_text(p.worst_accuracy, p.wrong);
      const std::string changes = changes_text(*r);
      out << (changes.empty() ? "  no node's accuracy changes" : "  " + changes) << "\n";
    }
  }
  for (const std::string& m : t.missing) out << "not scored: " << m << "\n";
  return out.str();
}

nlohmann::json sensitivity_json(const SensitivityTable& t) {
  auto accuracies = [](const std::map<std::string, double>& m) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [node, a] : m) j[node] = std::isnan(a) ? nlohmann::json() : nlohmann::json(a);
    return j;
  };
  auto number = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  nlohmann::json rows = nlohmann::json::array();
  for (const SensitivityRow& r : t.rows) {
    nlohmann::json points = nlohmann::json::array();
    for (const SensitivityPoint& p : r.points)
      points.push_back({{"factor", number(p.factor)},
                        {"value", p.value},
                        {"wrong", p.wrong},
                        {"mean_accuracy", number(p.mean_accuracy)},
                        {"worst_accuracy", number(p.worst_accuracy)},
                        {"node_accuracy", accuracies(p.node_accuracy)},
                        {"accuracy_changes", p.accuracy_changes},
                        {"changed", p.changed}});
    rows.push_back({{"node", r.node},
                    {"parameter", r.parameter},
                    {"value", r.value},
                    {"not_scaled", r.not_scaled},
                    {"scale", scale_name(r.scale)},
                    {"plateau", r.not_scaled.empty() && r.plateau()},
                    {"points", points}});
  }
  return {{"kind", "re-evaluation of stored data"},
          {"cases", t.cases},
          {"factors", t.factors},
          {"baseline_wrong", t.baseline_wrong},
          {"baseline_mean_accuracy", number(t.baseline_accuracy)},
          {"baseline_worst_accuracy", number(t.baseline_worst_accuracy)},
          {"baseline_node_accuracy", accuracies(t.baseline_node_accuracy)},
          {"baseline_wrong_labels", t.baseline_wrong_labels},
          {"missing", t.missing},
          {"rows", rows}};
}

std::string sensitivity_svg(const SensitivityTable& t) {
  // One row per varied parameter, one cell per factor (1x in the middle
  // when the factors straddle it) showing the lowest per-node balanced
  // accuracy, white where it is as at 1x, darker red the lower it falls,
  // green where it rises. The switches follow, one cell per other setting.
  std::vector<const SensitivityRow*> rows, switches;
  for (const SensitivityRow& r : t.rows) {
    if (r.scale == Scale::kSwitch)
      switches.push_back(&r);
    else if (r.not_scaled.empty())
      rows.push_back(&r);
  }
  std::vector<double> columns = t.factors;
  columns.push_back(1);
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  const int label_w = 430, cell_w = 100, cell_h = 18, top = 78;
  size_t switch_cells = 0;  // the most other settings of any switch
  for (const SensitivityRow* r : switches) switch_cells = std::max(switch_cells, r->points.size());
  const int width =
      label_w + cell_w * static_cast<int>(std::max(columns.size(), switch_cells + 1)) + 20;
  const int switch_top = top + cell_h * static_cast<int>(rows.size()) + 40;
  const int height = switch_top + cell_h * static_cast<int>(switches.size()) + 20;
  auto esc = [](const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '&')
        o += "&amp;";
      else if (c == '<')
        o += "&lt;";
      else if (c == '>')
        o += "&gt;";
      else
        o += c;
    }
    return o;
  };
  // A cell's colour is the largest change of any node's balanced accuracy
  // against 1x (the lowest accuracy alone would hide a node that falls to
  // a level another node already has): red by the largest drop, green
  // where some node rises and none drops, white where none moves.
  auto fill_for = [](const SensitivityPoint* p) {
    if (p == nullptr) return std::string("#ffffff");
    if (p->largest_drop > 0) {
      const int shade = std::max(60, 235 - static_cast<int>(p->largest_drop * 350));
      return "rgb(235," + std::to_string(shade) + "," + std::to_string(shade) + ")";
    }
    return p->largest_rise > 0 ? std::string("#c8e6c9") : std::string("#ffffff");
  };
  std::ostringstream svg;
  auto cell = [&](int x, int y, const SensitivityPoint* p, const std::string& text) {
    svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w - 2 << "\" height=\""
        << cell_h - 2 << "\" fill=\"" << fill_for(p) << "\" stroke=\"#bbbbbb\"/><text x=\""
        << x + cell_w / 2 << "\" y=\"" << y + 13 << "\" text-anchor=\"middle\">" << esc(text)
        << "</text>\n";
  };
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<text x=\"8\" y=\"16\" font-weight=\"bold\">Lowest balanced accuracy of any node when "
         "one parameter is varied (re-evaluation of stored data, "
      << t.cases << " cases)</text>\n";
  svg << "<text x=\"8\" y=\"32\">1x: "
      << esc(cell_text(t.baseline_worst_accuracy, t.baseline_wrong))
      << "; in brackets the wrong labels; * a share, scaled on its odds; + a growth factor, "
         "on its excess over 1</text>\n";
  svg << "<text x=\"8\" y=\"48\">colour: the largest change of any node's balanced accuracy "
         "against 1x (red a drop, green a rise)</text>\n";
  for (size_t c = 0; c < columns.size(); ++c)
    svg << "<text x=\"" << label_w + static_cast<int>(c) * cell_w + cell_w / 2 << "\" y=\""
        << top - 8 << "\" text-anchor=\"middle\">" << short_number(columns[c]) << "x</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const SensitivityRow& r = *rows[i];
    const int y = top + static_cast<int>(i) * cell_h;
    svg << "<text x=\"8\" y=\"" << y + 13 << "\">" << esc(r.node + " · " + r.parameter) << " ("
        << esc(value_text(r)) << ")</text>\n";
    for (size_t c = 0; c < columns.size(); ++c) {
      const SensitivityPoint* at = nullptr;
      for (const SensitivityPoint& p : r.points)
        if (p.factor == columns[c]) at = &p;
      cell(label_w + static_cast<int>(c) * cell_w, y, at,
           at ? cell_text(at->worst_accuracy, at->wrong)
              : cell_text(t.baseline_worst_accuracy, t.baseline_wrong));
    }
  }
  if (!switches.empty())
    svg << "<text x=\"8\" y=\"" << switch_top - 10
        << "\" font-weight=\"bold\">Switches: the value at 1x, then each other setting</text>\n";
  for (size_t i = 0; i < switches.size(); ++i) {
    const SensitivityRow& r = *switches[i];
    const int y = switch_top + static_cast<int>(i) * cell_h;
    svg << "<text x=\"8\" y=\"" << y + 13 << "\">" << esc(r.node + " · " + r.parameter)
        << "</text>\n";
    cell(
        label_w, y, nullptr,
        "=" + short_number(r.value) + " " + cell_text(t.baseline_worst_accuracy, t.baseline_wrong));
    for (size_t c = 0; c < r.points.size(); ++c) {
      const SensitivityPoint& p = r.points[c];
      cell(label_w + static_cast<int>(c + 1) * cell_w, y, &p,
           point_label(p) + " " + cell_text(p.worst_accuracy, p.wrong));
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace sonde::diagnose
