// What both renderings of a diagnosis report show, decided once: each
// node's charts as line charts (titles, axes, series), how sure each
// evidence row is in words, which rows support the finding, where to look
// first, and the problem's description. report.html is drawn from these
// (report_html.cpp); the web server adds them to the report.json it serves
// (serve/diagnosis_report.cpp), and the web UI (web/diagnosis.js) draws
// them without deciding anything of its own, so the two cannot drift.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnose/heuristic.hpp"
#include "diagnose/report_svg.hpp"

namespace sonde::diagnose {

struct ReportChart {
  std::string kind;  // the heuristic's chart name: "cdf", "scaling", "ramp", ...
  Chart chart;
};

// The line charts of a node's `charts` (NodeResult::charts), in a fixed
// order of kinds; a chart kind this does not know is left out.
std::vector<ReportChart> report_charts(const nlohmann::json& charts);

// A chart as report.json carries it: {kind, title, x_label, y_label,
// series: [{name, x, y, low, high, dashed}], hlines, vlines: [{value,
// label}], shaded: [[from, to]]}; numbers that are not finite are null.
nlohmann::json chart_json(const ReportChart& chart);

// "very sure (p < 0.001)", "sure (p < 0.01)", "fairly sure (p < 0.05)",
// "not significant (p = 0.31)", or "no test statistic" without a p-value.
std::string certainty_words(double p_value);

// False for a row that records a check found within limits (values
// "found", "violated" or "significant" false): shown, but not as a reason.
bool supports_finding(const Evidence& e);

// The first `max` distinct locations of the rows that support the
// finding, with standard-library types as the code spells them.
std::vector<std::string> look_at(const NodeResult& r, size_t max = 3);

// The heuristic's one-sentence description of the problem, or "".
std::string node_description(const NodeResult& r);

}  // namespace sonde::diagnose
