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

struct LoadedCase {
  std::string id;
  ExperimentData data;
  DiagnoseConfig config;
};

// Parameters that scaling cannot test on stored data, and why. A plan size
// decides which experiments run: stored data has the plan it was run with.
// A switch turns a check on or off: 0.5x and 2x of 1 are not settings.
std::string not_scalable(const std::string& parameter, double value) {
  static const std::set<std::string> plan_sizes = {"steps", "windows"};
  static const std::set<std::string> switches = {
      "network_check", "rank_test",         "window_rule",     "busy_check",    "trend_test",
      "noise_test",    "utilization_bound", "violating_steps", "varying_count", "peak_test"};
  if (plan_sizes.count(parameter))
    return "sets the experiment plan (stored data keeps the plan it ran)";
  if (switches.count(parameter)) return "a switch (selects a rule)";
  if (value == 0) return "0 (scaling leaves it 0)";
  return "";
}

// A share lives in (0, 1): doubling 0.5 gives 1.0, a value no data can
// exceed, which measures the bound, not the threshold's distance from the
// data. Shares are scaled on the odds scale instead, x/(1-x) times the
// factor: 0.5 -> 1/3 and 2/3, 0.05 -> 0.026 and 0.095. Parameters named
// *_share and min_attributed (the share of requests that found their
// trace) are shares.
bool is_share(const std::string& parameter, double value) {
  const bool named =
      parameter == "min_attributed" || (parameter.size() > 6 && parameter.ends_with("_share"));
  return named && value > 0 && value < 1;
}

double scaled(double value, double factor, bool odds) {
  if (!odds) return value * factor;
  return factor * value / (1 - value + factor * value);
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

}  // namespace

SensitivityTable parameter_sensitivity(const std::vector<ScenarioCase>& cases,
                                       const std::string& results_dir,
                                       const std::vector<double>& factors) {
  namespace fs = std::filesystem;
  SensitivityTable table;
  table.factors = factors;
  std::vector<LoadedCase> loaded;
  for (const ScenarioCase& c : cases) {
    const fs::path dir = fs::path(results_dir) / c.id;
    if (!fs::is_directory(dir / "data" / "experiments")) {
      table.missing.push_back(c.id + " (no " + (dir / "data" / "experiments").string() + ")");
      continue;
    }
    nlohmann::json requirements;
    if (std::ifstream in(dir / "config.json"); in) {
      try {
        requirements = requirements_of_environment(nlohmann::json::parse(in));
      } catch (const nlohmann::json::exception& e) {
        table.missing.push_back(c.id + " (" + (dir / "config.json").string() + ": " + e.what() +
                                ")");
        continue;
      }
    }
    try {
      loaded.push_back({c.id, load_experiment_data((dir / "data").string()),
                        parse_diagnose_config(requirements.is_null() ? nlohmann::json::object()
                                                                     : requirements)});
    } catch (const DiagnoseError& e) {
      table.missing.push_back(c.id + " (" + e.what() + ")");
    }
  }
  if (loaded.empty())
    throw DiagnoseError("no case of the cases file has stored data under " + results_dir +
                        " (run scenarios/run.sh --out " + results_dir + " first)");
  table.cases = static_cast<int>(loaded.size());

  // One evaluation of the suite, with `change` applied to each case's config.
  using Change = std::function<void(DiagnoseConfig&)>;
  auto evaluate = [&](const Change& change) {
    std::map<std::string, NodeStatuses> statuses;
    for (const LoadedCase& c : loaded) {
      DiagnoseConfig config = c.config;
      change(config);
      statuses[c.id] = node_statuses(run_diagnosis(c.data, config));
    }
    return score_statuses(cases, statuses);
  };
  const AccuracyTable base = evaluate([](DiagnoseConfig&) {});
  table.baseline_wrong = wrong_labels(base);
  table.baseline_accuracy = mean_accuracy(base);
  const std::set<std::string> base_wrong = wrong_set(base);
  table.baseline_wrong_labels.assign(base_wrong.begin(), base_wrong.end());

  auto vary = [&](SensitivityRow& row, const std::function<Change(double)>& at) {
    row.not_scaled = not_scalable(row.parameter, row.value);
    if (!row.not_scaled.empty()) return;
    row.odds = is_share(row.parameter, row.value);
    for (double f : factors) {
      SensitivityPoint p;
      p.factor = f;
      p.value = scaled(row.value, f, row.odds);
      const AccuracyTable t = evaluate(at(p.value));
      p.wrong = wrong_labels(t);
      p.mean_accuracy = mean_accuracy(t);
      const std::set<std::string> w = wrong_set(t);
      for (const std::string& x : w)
        if (!base_wrong.count(x)) p.changed.push_back("+" + x);
      for (const std::string& x : base_wrong)
        if (!w.count(x)) p.changed.push_back("-" + x);
      row.points.push_back(std::move(p));
    }
  };

  // The settings every node shares.
  {
    SensitivityRow row;
    row.node = "*";
    row.parameter = "alpha";
    row.value = loaded.front().config.settings.alpha;
    vary(row, [](double v) { return [v](DiagnoseConfig& c) { c.settings.alpha = v; }; });
    table.rows.push_back(std::move(row));
  }
  // Every parameter of every node, in tree order.
  std::vector<const HierarchyNode*> order;
  std::function<void(const HierarchyNode&)> walk = [&](const HierarchyNode& n) {
    order.push_back(&n);
    for (const HierarchyNode& c : n.children) walk(c);
  };
  walk(loaded.front().config.root);
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
      vary(row, [id, key](double v) {
        return [id, key, v](DiagnoseConfig& c) {
          if (HierarchyNode* node = find_node(c.root, id)) node->params[key] = v;
        };
      });
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

std::string format_sensitivity(const SensitivityTable& t) {
  std::ostringstream out;
  out << "Parameter sensitivity: re-evaluation of stored data (" << t.cases
      << " cases), wrong labels (misses + false alarms) at each factor; at 1x: " << t.baseline_wrong
      << " wrong, mean balanced accuracy " << short_number(t.baseline_accuracy) << "\n";
  out << std::left << std::setw(36) << "node" << std::setw(26) << "parameter" << std::right
      << std::setw(10) << "value";
  for (double f : t.factors) out << std::setw(10) << (short_number(f) + "x");
  out << "  labels that change\n";
  for (const SensitivityRow& r : t.rows) {
    out << std::left << std::setw(36) << r.node << std::setw(26) << r.parameter << std::right
        << std::setw(10) << (r.odds ? short_number(r.value) + "*" : short_number(r.value));
    if (!r.not_scaled.empty()) {
      out << "  not varied: " << r.not_scaled << "\n";
      continue;
    }
    std::string changes;
    for (const SensitivityPoint& p : r.points) {
      out << std::setw(10) << p.wrong;
      for (const std::string& c : p.changed)
        changes += (changes.empty() ? "" : "; ") + short_number(p.factor) + "x " + c;
    }
    out << "  " << changes << "\n";
  }
  out << "* a share: the factor scales its odds x/(1-x), so it stays in (0, 1)\n";
  for (const std::string& m : t.missing) out << "not scored: " << m << "\n";
  return out.str();
}

nlohmann::json sensitivity_json(const SensitivityTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SensitivityRow& r : t.rows) {
    nlohmann::json points = nlohmann::json::array();
    for (const SensitivityPoint& p : r.points)
      points.push_back({{"factor", p.factor},
                        {"value", p.value},
                        {"wrong", p.wrong},
                        {"mean_accuracy", p.mean_accuracy},
                        {"changed", p.changed}});
    rows.push_back({{"node", r.node},
                    {"parameter", r.parameter},
                    {"value", r.value},
                    {"not_scaled", r.not_scaled},
                    {"odds", r.odds},
                    {"points", points}});
  }
  return {{"kind", "re-evaluation of stored data"},
          {"cases", t.cases},
          {"factors", t.factors},
          {"baseline_wrong", t.baseline_wrong},
          {"baseline_mean_accuracy", t.baseline_accuracy},
          {"baseline_wrong_labels", t.baseline_wrong_labels},
          {"missing", t.missing},
          {"rows", rows}};
}

std::string sensitivity_svg(const SensitivityTable& t) {
  // One row per varied parameter, one cell per factor (1x in the middle
  // when the factors straddle it), coloured by the wrong labels added
  // against 1x: white none, darker red more; green where fewer.
  std::vector<const SensitivityRow*> rows;
  for (const SensitivityRow& r : t.rows)
    if (r.not_scaled.empty()) rows.push_back(&r);
  std::vector<double> columns = t.factors;
  columns.push_back(1);
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  const int label_w = 430, cell_w = 70, cell_h = 18, top = 46;
  const int width = label_w + cell_w * static_cast<int>(columns.size()) + 20;
  const int height = top + cell_h * static_cast<int>(rows.size()) + 30;
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
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<text x=\"8\" y=\"16\" font-weight=\"bold\">Wrong labels when one parameter is "
         "scaled (re-evaluation of stored data, "
      << t.cases << " cases; 1x: " << t.baseline_wrong << ")</text>\n";
  for (size_t c = 0; c < columns.size(); ++c)
    svg << "<text x=\"" << label_w + static_cast<int>(c) * cell_w + cell_w / 2 << "\" y=\""
        << top - 8 << "\" text-anchor=\"middle\">" << short_number(columns[c]) << "x</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const SensitivityRow& r = *rows[i];
    const int y = top + static_cast<int>(i) * cell_h;
    svg << "<text x=\"8\" y=\"" << y + 13 << "\">" << esc(r.node + " · " + r.parameter) << " ("
        << short_number(r.value) << ")</text>\n";
    for (size_t c = 0; c < columns.size(); ++c) {
      int wrong = t.baseline_wrong;
      for (const SensitivityPoint& p : r.points)
        if (p.factor == columns[c]) wrong = p.wrong;
      const int delta = wrong - t.baseline_wrong;
      std::string fill = "#ffffff";
      if (delta > 0) {
        const int shade = std::max(60, 235 - 35 * delta);
        fill = "rgb(235," + std::to_string(shade) + "," + std::to_string(shade) + ")";
      } else if (delta < 0) {
        fill = "#c8e6c9";
      }
      const int x = label_w + static_cast<int>(c) * cell_w;
      svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell_w - 2 << "\" height=\""
          << cell_h - 2 << "\" fill=\"" << fill << "\" stroke=\"#bbbbbb\"/><text x=\""
          << x + cell_w / 2 << "\" y=\"" << y + 13 << "\" text-anchor=\"middle\">" << wrong
          << "</text>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace sonde::diagnose
