#include "diagnose/scenario_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sonde::diagnose {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;)
    if (w != "-") out.push_back(w);
  return out;
}

// Node id -> status, over the whole tree.
void collect(const nlohmann::json& node, std::map<std::string, std::string>& out) {
  if (!node.is_object() || !node.contains("id") || !node.contains("status")) return;
  out[node["id"].get<std::string>()] = node["status"].get<std::string>();
  if (node.contains("children"))
    for (const auto& c : node["children"]) collect(c, out);
}

}  // namespace

std::vector<ScenarioCase> load_scenario_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DiagnoseError(path + ": cannot open");
  std::vector<ScenarioCase> out;
  std::set<std::string> ids;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream fields(t);
    while (std::getline(fields, cell, '|')) cells.push_back(trim(cell));
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (cells.size() != 5 && cells.size() != 6)
      throw DiagnoseError(where +
                          "expected 5 or 6 '|'-separated fields (id | title | shop flags | "
                          "must | must not [| demo options]), found " +
                          std::to_string(cells.size()));
    ScenarioCase c;
    c.id = cells[0];
    if (c.id.empty() || c.id.find_first_of(" /") != std::string::npos)
      throw DiagnoseError(where + "the id must be one word without '/'");
    if (!ids.insert(c.id).second) throw DiagnoseError(where + "duplicate id '" + c.id + "'");
    c.title = cells[1];
    c.shop_flags = words(cells[2]);
    for (const std::string& w : words(cells[3])) c.must.insert(w);
    for (const std::string& w : words(cells[4])) {
      if (c.must.count(w)) throw DiagnoseError(where + "'" + w + "' is both must and must not");
      c.must_not.insert(w);
    }
    if (cells.size() == 6) c.demo_options = words(cells[5]);
    out.push_back(std::move(c));
  }
  return out;
}

AccuracyTable score_statuses(const std::vector<ScenarioCase>& cases,
                             const std::map<std::string, NodeStatuses>& statuses) {
  AccuracyTable table;
  std::map<std::string, size_t> row_of;
  auto row = [&](const std::string& node) -> AccuracyRow& {
    auto it = row_of.find(node);
    if (it != row_of.end()) return table.rows[it->second];
    row_of[node] = table.rows.size();
    AccuracyRow added;
    added.node = node;
    table.rows.push_back(std::move(added));
    return table.rows.back();
  };
  for (const ScenarioCase& c : cases) {
    for (const std::string& n : c.must) row(n);
    for (const std::string& n : c.must_not) row(n);
  }
  for (const ScenarioCase& c : cases) {
    auto found = statuses.find(c.id);
    if (found == statuses.end()) continue;
    const NodeStatuses& status = found->second;
    auto status_of = [&](const std::string& n) {
      auto it = status.find(n);
      return it == status.end() ? std::string("absent") : it->second;
    };
    for (const std::string& n : c.must) {
      AccuracyRow& r = row(n);
      ++r.positives;
      const std::string s = status_of(n);
      if (s == "detected")
        ++r.tp;
      else
        r.wrong.push_back(c.id + " (missed: " + s + ")");
    }
    for (const std::string& n : c.must_not) {
      AccuracyRow& r = row(n);
      ++r.negatives;
      if (status_of(n) == "detected") {
        ++r.fp;
        r.wrong.push_back(c.id + " (false alarm)");
      }
    }
  }
  for (AccuracyRow& r : table.rows) {
    r.r_tp = r.positives > 0 ? static_cast<double>(r.tp) / r.positives : NAN;
    r.r_fp = r.negatives > 0 ? static_cast<double>(r.fp) / r.negatives : NAN;
    // Balanced accuracy; with one class only, the rate of that class.
    if (r.positives > 0 && r.negatives > 0) {
      r.accuracy = (1 + r.r_tp - r.r_fp) / 2;
    } else if (r.positives > 0) {
      r.accuracy = r.r_tp;
    } else {
      r.accuracy = r.negatives > 0 ? 1 - r.r_fp : NAN;
    }
  }
  return table;
}

AccuracyTable score_scenarios(const std::vector<ScenarioCase>& cases,
                              const std::string& results_dir) {
  std::map<std::string, NodeStatuses> statuses;
  std::vector<std::string> missing, incomplete;
  for (const ScenarioCase& c : cases) {
    const std::filesystem::path report = std::filesystem::path(results_dir) / c.id / "report.json";
    std::ifstream in(report);
    if (!in) {
      missing.push_back(c.id + " (no " + report.string() + ")");
      continue;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      missing.push_back(c.id + " (" + report.string() + ": " + e.what() + ")");
      continue;
    }
    if (!j.value("complete", true)) incomplete.push_back(c.id);
    collect(j.contains("root") ? j["root"] : j, statuses[c.id]);
  }
  AccuracyTable table = score_statuses(cases, statuses);
  table.missing = std::move(missing);
  table.incomplete = std::move(incomplete);
  return table;
}

NodeStatuses node_statuses(const NodeResult& root) {
  NodeStatuses out;
  std::function<void(const NodeResult&)> walk = [&](const NodeResult& n) {
    out[n.id] = status_name(n.status);
    for (const NodeResult& c : n.children) walk(c);
  };
  walk(root);
  return out;
}

int wrong_labels(const AccuracyTable& table) {
  int n = 0;
  for (const AccuracyRow& r : table.rows) n += static_cast<int>(r.wrong.size());
  return n;
}

std::string accuracy_text(double a) {
  if (std::isnan(a)) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << a;
  return s.str();
}

std::string format_accuracy(const AccuracyTable& table) {
  std::ostringstream out;
  // Right-aligned in its column: "-" padded to the width of "0.875".
  auto num = [](double v) { return std::isnan(v) ? std::string("   -") : accuracy_text(v); };
  out << std::left << std::setw(36) << "node" << std::right << std::setw(5) << "pos" << std::setw(5)
      << "neg" << std::setw(5) << "tp" << std::setw(5) << "fp" << std::setw(8) << "r_tp"
      << std::setw(8) << "r_fp" << std::setw(8) << "a"
      << "  wrong\n";
  for (const AccuracyRow& r : table.rows) {
    std::string wrong;
    for (const std::string& w : r.wrong) wrong += (wrong.empty() ? "" : ", ") + w;
    out << std::left << std::setw(36) << r.node << std::right << std::setw(5) << r.positives
        << std::setw(5) << r.negatives << std::setw(5) << r.tp << std::setw(5) << r.fp
        << std::setw(8) << num(r.r_tp) << std::setw(8) << num(r.r_fp) << std::setw(8)
        << num(r.accuracy) << "  " << wrong << "\n";
  }
  for (const std::string& m : table.missing) out << "not scored: " << m << "\n";
  for (const std::string& m : table.incomplete) out << "incomplete run: " << m << "\n";
  return out.str();
}

std::string format_repeated_accuracy(const std::vector<std::string>& names,
                                     const std::vector<AccuracyTable>& tables) {
  std::ostringstream out;
  out << "Repeated fresh runs: " << tables.size() << " (";
  for (size_t k = 0; k < names.size(); ++k) out << (k ? ", " : "") << names[k];
  out << ")\n";
  out << std::left << std::setw(36) << "node" << std::right << std::setw(8) << "mean a"
      << std::setw(9) << "worst a"
      << "  wrong per repetition\n";
  // Rows in the first table's order; a node absent from a repetition's
  // table (never labelled) does not count there.
  std::vector<std::string> nodes;
  for (const AccuracyTable& t : tables)
    for (const AccuracyRow& r : t.rows)
      if (std::find(nodes.begin(), nodes.end(), r.node) == nodes.end()) nodes.push_back(r.node);
  for (const std::string& node : nodes) {
    double sum = 0, worst = NAN;
    int n = 0;
    std::string wrong;
    for (size_t k = 0; k < tables.size(); ++k) {
      for (const AccuracyRow& r : tables[k].rows) {
        if (r.node != node) continue;
        if (!std::isnan(r.accuracy)) {
          sum += r.accuracy;
          ++n;
          worst = std::isnan(worst) ? r.accuracy : std::min(worst, r.accuracy);
        }
        for (const std::string& w : r.wrong)
          wrong += (wrong.empty() ? "" : ", ") + names[k] + ": " + w;
      }
    }
    out << std::left << std::setw(36) << node << std::right << std::setw(8)
        << (n > 0 ? accuracy_text(sum / n) : "-") << std::setw(9)
        << (n > 0 ? accuracy_text(worst) : "-") << "  " << wrong << "\n";
  }
  for (size_t k = 0; k < tables.size(); ++k) {
    for (const std::string& m : tables[k].missing)
      out << "not scored: " << names[k] << ": " << m << "\n";
    for (const std::string& m : tables[k].incomplete)
      out << "incomplete run: " << names[k] << ": " << m << "\n";
  }
  return out.str();
}

}  // namespace sonde::diagnose
