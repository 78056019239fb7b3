// report.html: what is wrong, where, how sure, what to look at, with the
// charts the heuristics produced. Self-contained (inline CSS and SVG).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/model/operation_signature.hpp"
#include "analysis/text/xml_escape.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/report.hpp"
#include "diagnose/report_svg.hpp"
#include "diagnose/report_view.hpp"

namespace sonde::diagnose {
namespace {

using analysis::xml_escape;

// Reasons, findings and locations name operations and lock sites: shown
// with the standard library's types as the code spells them.
std::string readable(const std::string& text) {
  return xml_escape(analysis::readable_type_names(text));
}

std::string num(double v, int precision = 3) {
  if (!std::isfinite(v)) return "–";
  return heuristics::fmt(v, precision);
}

std::string charts_html(const NodeResult& r) {
  std::string out;
  for (const ReportChart& c : report_charts(r.charts)) out += render_svg(c.chart);
  return out;
}

void node_html(const NodeResult& r, std::ostringstream& o, int depth) {
  const char* status = status_name(r.status);
  o << "<details class=\"node " << status << "\"" << (r.status == Status::kDetected ? " open" : "")
    << " style=\"margin-left:" << depth * 18 << "px\"><summary><span class=\"badge\">"
    << xml_escape(status) << "</span> <b>" << xml_escape(r.title) << "</b> <span class=\"why\">"
    << readable(r.reason) << "</span></summary>";
  if (const std::string what = node_description(r); !what.empty()) {
    o << "<p class=\"what\">" << xml_escape(what) << "</p>";
  }
  if (!r.evidence.empty()) {
    o << "<table><tr><th>where</th><th>finding</th><th>how "
         "sure</th><th>test</th><th>effect</th><th>data</th></tr>";
    for (const Evidence& e : r.evidence) {
      // As the served view (web/diagnosis.js): rows that do not support a
      // finding were checked and found within limits, also on a node that
      // was not detected, so a reader sees why.
      o << (supports_finding(e) ? "<tr>"
                                : "<tr class=\"fine\" title=\"checked and found within limits\">")
        << "<td><code>" << readable(e.location) << "</code></td><td>" << readable(e.detail)
        << "</td><td>" << xml_escape(certainty_words(e.p_value)) << "</td><td>"
        << xml_escape(e.test) << "</td><td>" << xml_escape(num(e.effect_size)) << " <small>"
        << xml_escape(e.effect) << "</small></td><td><small>" << xml_escape(e.data)
        << "</small></td></tr>";
    }
    o << "</table>";
  }
  o << "<div class=\"charts\">" << charts_html(r) << "</div></details>";
  for (const NodeResult& c : r.children) node_html(c, o, depth + 1);
}

void collect_detected(const NodeResult& r, std::vector<const NodeResult*>& out) {
  if (r.status == Status::kDetected) out.push_back(&r);
  for (const NodeResult& c : r.children) collect_detected(c, out);
}

}  // namespace

std::string report_html(const NodeResult& root, const ReportMeta& meta) {
  const ResultCounts c = count_results(root);
  std::vector<const NodeResult*> found;
  collect_detected(root, found);
  std::ostringstream o;
  o << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>sonde diagnosis</title><style>"
       "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
       ".badge{padding:1px 6px;border-radius:4px;font-size:12px;color:#fff;background:#888}"
       ".detected .badge{background:#c62828}.not_detected .badge{background:#2e7d32}"
       ".not_evaluated .badge{background:#ef6c00}.skipped .badge{background:#9e9e9e}"
       ".node{border-left:3px solid #ddd;padding:4px 8px;margin:6px 0}.why{color:#555}"
       "table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid "
       "#ddd;padding:3px 6px;vertical-align:top}"
       ".what{font-style:italic;color:#444}tr.fine "
       "td{color:#777}.warn{background:#fff3e0;padding:8px;border:1px solid "
       "#ef6c00}"
       "</style></head><body><h1>Performance diagnosis</h1>";
  o << "<p>Data: <code>" << xml_escape(meta.data_dir) << "</code>, " << meta.experiments
    << " experiment(s).</p>";
  if (!meta.complete) {
    o << "<p class=\"warn\">The run did not complete: " << xml_escape(meta.incomplete_reason)
      << ". Results cover only the experiments that finished.</p>";
  }
  for (const std::string& w : meta.warnings) o << "<p class=\"warn\">" << xml_escape(w) << "</p>";
  o << "<h2>Summary</h2>";
  const NodeResult* leafmost = nullptr;
  for (const NodeResult* r : found) leafmost = r;
  if (found.empty()) {
    o << "<p>No performance problem was detected"
      << (c.not_evaluated ? " among the checks that could run" : "") << ".</p>";
  } else {
    o << "<p>" << found.size() << " finding(s). The most specific: <b>"
      << xml_escape(leafmost->title) << "</b> — " << readable(leafmost->reason) << ".</p><ul>";
    for (const NodeResult* r : found) {
      o << "<li><b>" << xml_escape(r->title) << "</b>: " << readable(r->reason);
      const std::vector<std::string> places = look_at(*r);
      for (size_t i = 0; i < places.size(); ++i)
        o << (i == 0 ? " — look at " : ", ") << "<code>" << xml_escape(places[i]) << "</code>";
      o << "</li>";
    }
    o << "</ul>";
  }
  o << "<p>" << c.detected << " detected, " << c.not_detected << " not detected, " << c.skipped
    << " skipped (parent not detected), " << c.not_evaluated
    << " not evaluated (data missing).</p>";
  o << "<h2>Problem hierarchy</h2><p>Each problem is examined only when its parent was detected "
       "(a parent that could not be evaluated does not stop its children).</p>";
  node_html(root, o, 0);
  o << "</body></html>\n";
  return o.str();
}

std::string report_summary(const NodeResult& root, const ReportMeta& meta) {
  std::ostringstream o;
  if (!meta.complete) o << "INCOMPLETE run: " << meta.incomplete_reason << "\n";
  for (const std::string& w : meta.warnings) o << "WARNING: " << w << "\n";
  std::vector<const NodeResult*> found;
  collect_detected(root, found);
  const ResultCounts c = count_results(root);
  o << "diagnosis: " << c.detected << " detected, " << c.not_detected << " not detected, "
    << c.skipped << " skipped, " << c.not_evaluated << " not evaluated\n";
  for (const NodeResult* r : found) {
    o << "  DETECTED " << r->title << ": " << analysis::readable_type_names(r->reason) << "\n";
    int shown = 0;
    for (const Evidence& e : r->evidence) {
      if (shown == 3) break;
      if (e.detail.empty() || !supports_finding(e)) continue;
      o << "    - " << analysis::readable_type_names(e.detail) << "\n";
      ++shown;
    }
  }
  std::vector<const NodeResult*> stack{&root};
  while (!stack.empty()) {
    const NodeResult* r = stack.back();
    stack.pop_back();
    if (r->status == Status::kNotEvaluated)
      o << "  not evaluated: " << r->title << " (" << r->reason << ")\n";
    for (auto it = r->children.rbegin(); it != r->children.rend(); ++it) stack.push_back(&*it);
  }
  return o.str();
}

void write_report(const NodeResult& root, const ReportMeta& meta, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw DiagnoseError(dir + ": cannot create: " + ec.message());
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw DiagnoseError(path + ": write failed");
  };
  write(dir + "/report.json", report_json(root, meta).dump(2) + "\n");
  write(dir + "/report.html", report_html(root, meta));
}

}  // namespace sonde::diagnose
