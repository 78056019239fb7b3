// report.html: what is wrong, where, how sure, what to look at, with the
// charts the heuristics produced. Self-contained (inline CSS and SVG).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/operation_signature.hpp"
#include "analysis/xml_escape.hpp"
#include "diagnose/diagnosis.hpp"
#include "diagnose/heuristics/common.hpp"
#include "diagnose/report.hpp"
#include "diagnose/report_svg.hpp"

namespace sonde::diagnose {
namespace {

using analysis::xml_escape;
using nlohmann::json;

// Reasons, findings and locations name operations and lock sites: shown
// with the standard library's types as the code spells them.
std::string readable(const std::string& text) {
  return xml_escape(analysis::readable_type_names(text));
}

std::string num(double v, int precision = 3) {
  if (!std::isfinite(v)) return "–";
  return heuristics::fmt(v, precision);
}

// How sure, in words, from the p-value.
std::string certainty(double p) {
  if (!std::isfinite(p)) return "";
  if (p < 0.001) return "very sure (p < 0.001)";
  if (p < 0.01) return "sure (p < 0.01)";
  if (p < 0.05) return "fairly sure (p < 0.05)";
  return "not significant (p = " + num(p, 2) + ")";
}

double d(const json& j) { return j.is_number() ? j.get<double>() : NAN; }

std::string charts_html(const NodeResult& r) {
  std::string out;
  const json& c = r.charts;
  if (c.contains("cdf")) {
    for (const json& s : c["cdf"]) {
      Chart ch{"Response times of " + s["service"].get<std::string>() + " (CDF)",
               "response time [ms]",
               "share of requests",
               {},
               {},
               {},
               {}};
      ChartSeries cs{"measured", {}, {}, {}, {}, false};
      for (const json& p : s["points"]) {
        cs.x.push_back(d(p[0]));
        cs.y.push_back(d(p[1]));
      }
      ch.series.push_back(cs);
      ch.vlines.push_back({d(s["threshold_ms"]), "requirement"});
      ch.hlines.push_back({d(s["percentile"]), "P" + num(d(s["percentile"]) * 100)});
      out += render_svg(ch);
    }
  }
  if (c.contains("hiccup_timeline")) {
    for (const json& s : c["hiccup_timeline"]) {
      const json& buckets = s["buckets"];
      if (buckets.empty()) continue;
      const double t0 = d(buckets[0][0]);
      Chart ch{"Hiccup timeline of " + s["service"].get<std::string>(),
               "time [s]",
               "bucket percentile [ms]",
               {},
               {},
               {},
               {}};
      ChartSeries cs{"per bucket", {}, {}, {}, {}, false};
      for (const json& b : buckets) {
        cs.x.push_back((d(b[0]) - t0) / 1e9);
        cs.y.push_back(d(b[2]));
      }
      ch.series.push_back(cs);
      ch.hlines.push_back({d(s["threshold_ms"]), "requirement"});
      for (const json& h : s["hiccups"]) {
        ch.shaded.emplace_back((d(h["start_ns"]) - t0) / 1e9, (d(h["end_ns"]) - t0) / 1e9);
      }
      out += render_svg(ch);
    }
  }
  if (c.contains("scaling")) {
    for (const json& s : c["scaling"]) {
      Chart ch{"Response time vs users: " + s["service"].get<std::string>(),
               "users",
               "response time [ms]",
               {},
               {},
               {},
               {}};
      ChartSeries mean{"mean (95% CI)", {}, {}, {}, {}, false};
      ChartSeries pct{"percentile", {}, {}, {}, {}, true};
      for (const json& p : s["points"]) {
        mean.x.push_back(d(p["users"]));
        mean.y.push_back(d(p["mean"]));
        mean.low.push_back(d(p["low"]));
        mean.high.push_back(d(p["high"]));
        pct.x.push_back(d(p["users"]));
        pct.y.push_back(d(p["percentile"]));
      }
      ch.series = {mean, pct};
      ch.hlines.push_back({d(s["threshold_ms"]), "requirement"});
      out += render_svg(ch);
    }
  }
  if (c.contains("queueing")) {
    for (const json& s : c["queueing"]) {
      Chart ch{"Measured vs explainable by CPU queueing: " + s["service"].get<std::string>(),
               "users",
               "mean response time [ms]",
               {},
               {},
               {},
               {}};
      ChartSeries m{"measured", {}, {}, {}, {}, false};
      ChartSeries t{"queueing threshold", {}, {}, {}, {}, true};
      for (const json& p : s["points"]) {
        m.x.push_back(d(p["users"]));
        m.y.push_back(d(p["measured"]));
        t.x.push_back(d(p["users"]));
        t.y.push_back(d(p["threshold"]));
      }
      ch.series = {m, t};
      out += render_svg(ch);
    }
  }
  if (c.contains("ramp")) {
    for (const json& s : c["ramp"]) {
      Chart ch{"Response time per time window: " + s["service"].get<std::string>(),
               "window",
               "mean response time [ms]",
               {},
               {},
               {},
               {}};
      ChartSeries m{"mean (95% CI)", {}, {}, {}, {}, false};
      for (const json& p : s["windows"]) {
        m.x.push_back(d(p[0]));
        m.y.push_back(d(p[1]));
        m.low.push_back(d(p[2]));
        m.high.push_back(d(p[3]));
      }
      ch.series = {m};
      out += render_svg(ch);
    }
  }
  if (c.contains("growth")) {
    Chart ch{"Waiting/database time vs users", "users", "mean [ms]", {}, {}, {}, {}};
    for (const json& s : c["growth"]) {
      ChartSeries m{analysis::readable_type_names(s["key"].get<std::string>()),
                    {},
                    {},
                    {},
                    {},
                    !s["found"].get<bool>()};
      for (const json& p : s["points"]) {
        m.x.push_back(d(p[0]));
        m.y.push_back(d(p[1]));
      }
      ch.series.push_back(m);
    }
    out += render_svg(ch);
  }
  if (c.contains("database_cpu") && !c["database_cpu"].empty()) {
    Chart ch{
        "Database CPU vs users (Database Congestion)", "users", "utilization [%]", {}, {}, {}, {}};
    ChartSeries db{"database (estimated)", {}, {}, {}, {}, false};
    ChartSeries cpu{"whole CPU (measured)", {}, {}, {}, {}, true};
    for (const json& p : c["database_cpu"]) {
      db.x.push_back(d(p["users"]));
      db.y.push_back(100 * d(p["database_cpu"]));
      cpu.x.push_back(d(p["users"]));
      cpu.y.push_back(100 * d(p["cpu"]));
    }
    ch.series = {db, cpu};
    ch.hlines.push_back({100 * d(c["database_cpu"][0]["threshold"]), "saturation"});
    out += render_svg(ch);
  }
  if (c.contains("time_split")) {
    // Time Outside the Application: per service found, the mean time inside
    // the application's traces and outside them at each examined load.
    for (const json& s : c["time_split"]) {
      if (!s.value("found", false)) continue;
      Chart ch{"Inside vs outside the application: " + s["service"].get<std::string>(),
               "users",
               "mean per request [ms]",
               {},
               {},
               {},
               {}};
      ChartSeries in{"inside the application", {}, {}, {}, {}, false};
      ChartSeries outside{"outside (transport, queues, client)", {}, {}, {}, {}, true};
      for (const json& p : s["points"]) {
        in.x.push_back(d(p["users"]));
        in.y.push_back(d(p["inside_ms"]));
        outside.x.push_back(d(p["users"]));
        outside.y.push_back(d(p["outside_ms"]));
      }
      ch.series = {in, outside};
      out += render_svg(ch);
    }
  }
  if (c.contains("message_throughput")) {
    Chart ch{"Message throughput vs users", "users", "messages/s", {}, {}, {}, {}};
    ChartSeries m{"messages/s", {}, {}, {}, {}, false};
    for (const json& p : c["message_throughput"]) {
      m.x.push_back(d(p[0]));
      m.y.push_back(d(p[1]));
    }
    ch.series = {m};
    out += render_svg(ch);
  }
  return out;
}

// Evidence rows also record what was checked and found fine; the summary
// shows only the rows behind the finding.
bool supports(const Evidence& e) {
  for (const char* key : {"found", "violated", "significant"}) {
    if (e.values.contains(key) && e.values[key].is_boolean() && !e.values[key].get<bool>())
      return false;
  }
  return true;
}

void node_html(const NodeResult& r, std::ostringstream& o, int depth) {
  const char* status = status_name(r.status);
  o << "<details class=\"node " << status << "\"" << (r.status == Status::kDetected ? " open" : "")
    << " style=\"margin-left:" << depth * 18 << "px\"><summary><span class=\"badge\">"
    << xml_escape(status) << "</span> <b>" << xml_escape(r.title) << "</b> <span class=\"why\">"
    << readable(r.reason) << "</span></summary>";
  const auto& registry = heuristic_registry();
  if (auto it = registry.find(r.heuristic); it != registry.end()) {
    o << "<p class=\"what\">" << xml_escape(it->second->description()) << "</p>";
  }
  if (!r.evidence.empty()) {
    o << "<table><tr><th>where</th><th>finding</th><th>how "
         "sure</th><th>test</th><th>effect</th><th>data</th></tr>";
    for (const Evidence& e : r.evidence) {
      // As the served view (web/diagnosis.js): rows that do not support a
      // finding were checked and found within limits, also on a node that
      // was not detected, so a reader sees why.
      o << (supports(e) ? "<tr>" : "<tr class=\"fine\" title=\"checked and found within limits\">")
        << "<td><code>" << readable(e.location) << "</code></td><td>" << readable(e.detail)
        << "</td><td>" << xml_escape(certainty(e.p_value)) << "</td><td>" << xml_escape(e.test)
        << "</td><td>" << xml_escape(num(e.effect_size)) << " <small>" << xml_escape(e.effect)
        << "</small></td><td><small>" << xml_escape(e.data) << "</small></td></tr>";
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
      const auto first = std::find_if(r->evidence.begin(), r->evidence.end(), supports);
      if (first != r->evidence.end())
        o << " — look at <code>" << readable(first->location) << "</code>";
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
      if (e.detail.empty() || !supports(e)) continue;
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
