// The sensitivity table as `sonde diagnose --sensitivity` shows it: the
// text table, its JSON (sensitivity.json) and the plot (sensitivity.svg)
// that docs/diagnose/parameters.md embeds. The computation is in
// sensitivity.cpp.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "diagnose/sensitivity.hpp"

namespace sonde::diagnose {

namespace {

std::string short_number(double v) {
  std::ostringstream s;
  s << std::setprecision(4) << v;
  return s.str();
}

// How a point is named in the text and the plot: "0.5x", or "=2" for a
// switch's setting.
std::string point_label(const SensitivityPoint& p) {
  return std::isnan(p.factor) ? "=" + short_number(p.value) : short_number(p.factor) + "x";
}

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
