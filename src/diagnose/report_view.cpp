#include "diagnose/report_view.hpp"

#include <cmath>
#include <set>

#include "analysis/model/operation_signature.hpp"
#include "diagnose/heuristics/common.hpp"

namespace sonde::diagnose {
namespace {

using nlohmann::json;

// Safe readers: the server applies these to any report.json it is given
// (serve/diagnosis_report.cpp checks the keys of nodes and evidence, not
// the inside of `charts`), so a missing key, a wrong type or an index past
// the end reads as null, and null becomes NaN, "" or an empty list.
const json& null_json() {
  static const json kNull;
  return kNull;
}
const json& key(const json& j, const char* name) {
  if (!j.is_object()) return null_json();
  const auto it = j.find(name);
  return it == j.end() ? null_json() : *it;
}
const json& item(const json& j, size_t i) {
  return j.is_array() && i < j.size() ? j[i] : null_json();
}
double number(const json& j) { return j.is_number() ? j.get<double>() : NAN; }
std::string text(const json& j) { return j.is_string() ? j.get<std::string>() : ""; }
const json& list(const json& j, const char* name) {
  static const json kEmpty = json::array();
  const json& v = key(j, name);
  return v.is_array() ? v : kEmpty;
}
// Reported names (services, statements, lock sites) with the standard
// library's types as the code spells them.
std::string readable(const json& j) { return analysis::readable_type_names(text(j)); }

ChartSeries series(std::string name, bool dashed = false) {
  ChartSeries s;
  s.name = std::move(name);
  s.dashed = dashed;
  return s;
}

Chart chart(std::string title, std::string x_label, std::string y_label) {
  Chart c;
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.y_label = std::move(y_label);
  return c;
}

void add_cdf(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "cdf")) {
    Chart c = chart(
        "Response times of " + readable(key(s, "service")) + " (share of requests finished within)",
        "response time [ms]", "share of requests");
    ChartSeries m = series("measured");
    for (const json& p : list(s, "points")) {
      m.x.push_back(number(item(p, 0)));
      m.y.push_back(number(item(p, 1)));
    }
    c.series = {m};
    c.vlines.push_back({number(key(s, "threshold_ms")), "requirement"});
    c.hlines.push_back(
        {number(key(s, "percentile")), "P" + heuristics::fmt(number(key(s, "percentile")) * 100)});
    out.push_back({"cdf", c});
  }
}

void add_hiccup_timeline(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "hiccup_timeline")) {
    const json& buckets = list(s, "buckets");
    if (buckets.empty()) continue;
    const double t0 = number(item(item(buckets, 0), 0));
    Chart c = chart("Hiccup timeline of " + readable(key(s, "service")), "time [s]",
                    "percentile per time bucket [ms]");
    ChartSeries m = series("per bucket");
    for (const json& b : buckets) {
      m.x.push_back((number(item(b, 0)) - t0) / 1e9);
      m.y.push_back(number(item(b, 2)));
    }
    c.series = {m};
    c.hlines.push_back({number(key(s, "threshold_ms")), "requirement"});
    for (const json& h : list(s, "hiccups"))
      c.shaded.emplace_back((number(key(h, "start_ns")) - t0) / 1e9,
                            (number(key(h, "end_ns")) - t0) / 1e9);
    out.push_back({"hiccup_timeline", c});
  }
}

void add_scaling(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "scaling")) {
    Chart c = chart("Response time vs users: " + readable(key(s, "service")), "users",
                    "response time [ms]");
    ChartSeries mean = series("mean (95% confidence interval)");
    ChartSeries pct = series("percentile", /*dashed=*/true);
    for (const json& p : list(s, "points")) {
      mean.x.push_back(number(key(p, "users")));
      mean.y.push_back(number(key(p, "mean")));
      mean.low.push_back(number(key(p, "low")));
      mean.high.push_back(number(key(p, "high")));
      pct.x.push_back(number(key(p, "users")));
      pct.y.push_back(number(key(p, "percentile")));
    }
    c.series = {mean, pct};
    c.hlines.push_back({number(key(s, "threshold_ms")), "requirement"});
    out.push_back({"scaling", c});
  }
}

void add_queueing(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "queueing")) {
    Chart c = chart("Measured vs explainable by CPU queueing: " + readable(key(s, "service")),
                    "users", "mean response time [ms]");
    ChartSeries measured = series("measured");
    ChartSeries threshold = series("queueing threshold", /*dashed=*/true);
    for (const json& p : list(s, "points")) {
      measured.x.push_back(number(key(p, "users")));
      measured.y.push_back(number(key(p, "measured")));
      threshold.x.push_back(number(key(p, "users")));
      threshold.y.push_back(number(key(p, "threshold")));
    }
    c.series = {measured, threshold};
    out.push_back({"queueing", c});
  }
}

void add_ramp(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "ramp")) {
    Chart c = chart("Response time per time window: " + readable(key(s, "service")), "window",
                    "mean response time [ms]");
    ChartSeries mean = series("mean (95% confidence interval)");
    for (const json& w : list(s, "windows")) {
      mean.x.push_back(number(item(w, 0)));
      mean.y.push_back(number(item(w, 1)));
      mean.low.push_back(number(item(w, 2)));
      mean.high.push_back(number(item(w, 3)));
    }
    c.series = {mean};
    out.push_back({"ramp", c});
  }
}

// One chart for all keys: the waits or database times that grew and those
// that did not (dashed).
void add_growth(const json& charts, std::vector<ReportChart>& out) {
  const json& growth = list(charts, "growth");
  if (growth.empty()) return;
  Chart c = chart("Waiting/database time vs users", "users", "mean [ms]");
  for (const json& s : growth) {
    ChartSeries m = series(readable(key(s, "key")), /*dashed=*/key(s, "found") == false);
    for (const json& p : list(s, "points")) {
      m.x.push_back(number(item(p, 0)));
      m.y.push_back(number(item(p, 1)));
    }
    c.series.push_back(m);
  }
  out.push_back({"growth", c});
}

void add_database_cpu(const json& charts, std::vector<ReportChart>& out) {
  const json& points = list(charts, "database_cpu");
  if (points.empty()) return;
  Chart c = chart("Database CPU vs users (Database Congestion)", "users", "utilization [%]");
  ChartSeries db = series("database (estimated)");
  ChartSeries cpu = series("whole CPU (measured)", /*dashed=*/true);
  for (const json& p : points) {
    db.x.push_back(number(key(p, "users")));
    db.y.push_back(100 * number(key(p, "database_cpu")));
    cpu.x.push_back(number(key(p, "users")));
    cpu.y.push_back(100 * number(key(p, "cpu")));
  }
  c.series = {db, cpu};
  c.hlines.push_back({100 * number(key(item(points, 0), "threshold")), "saturation"});
  out.push_back({"database_cpu", c});
}

// Time Outside the Application: per service found, the mean time inside
// the application's traces and outside them at each examined load.
void add_time_split(const json& charts, std::vector<ReportChart>& out) {
  for (const json& s : list(charts, "time_split")) {
    if (key(s, "found") != true) continue;
    Chart c = chart("Inside vs outside the application: " + readable(key(s, "service")), "users",
                    "mean per request [ms]");
    ChartSeries inside = series("inside the application");
    ChartSeries outside = series("outside (transport, queues, client)", /*dashed=*/true);
    for (const json& p : list(s, "points")) {
      inside.x.push_back(number(key(p, "users")));
      inside.y.push_back(number(key(p, "inside_ms")));
      outside.x.push_back(number(key(p, "users")));
      outside.y.push_back(number(key(p, "outside_ms")));
    }
    c.series = {inside, outside};
    out.push_back({"time_split", c});
  }
}

// Database Congestion's in-process rule (database_calls.cpp): the share of
// each service's response time spent in database calls, per load.
void add_database_call_share(const json& charts, std::vector<ReportChart>& out) {
  const json& services = list(charts, "database_call_share");
  if (services.empty()) return;
  Chart c = chart("Share of the response time in database calls vs users", "users",
                  "database time [% of the response time]");
  for (const json& s : services) {
    ChartSeries m = series(readable(key(s, "service")), /*dashed=*/key(s, "found") != true);
    for (const json& p : list(s, "points")) {
      m.x.push_back(number(key(p, "users")));
      m.y.push_back(100 * number(key(p, "share")));
    }
    c.series.push_back(m);
  }
  out.push_back({"database_call_share", c});
}

void add_message_throughput(const json& charts, std::vector<ReportChart>& out) {
  const json& points = list(charts, "message_throughput");
  if (points.empty()) return;
  Chart c = chart("Message throughput vs users", "users", "messages/s");
  ChartSeries m = series("messages/s");
  for (const json& p : points) {
    m.x.push_back(number(item(p, 0)));
    m.y.push_back(number(item(p, 1)));
  }
  c.series = {m};
  out.push_back({"message_throughput", c});
}

json numbers(const std::vector<double>& v) {
  json out = json::array();
  for (double x : v) out.push_back(std::isfinite(x) ? json(x) : json(nullptr));
  return out;
}

json lines(const std::vector<ChartLine>& v) {
  json out = json::array();
  for (const ChartLine& l : v)
    out.push_back(
        {{"value", std::isfinite(l.value) ? json(l.value) : json(nullptr)}, {"label", l.label}});
  return out;
}

}  // namespace

std::vector<ReportChart> report_charts(const json& charts) {
  std::vector<ReportChart> out;
  if (!charts.is_object()) return out;
  add_cdf(charts, out);
  add_hiccup_timeline(charts, out);
  add_scaling(charts, out);
  add_queueing(charts, out);
  add_ramp(charts, out);
  add_growth(charts, out);
  add_database_cpu(charts, out);
  add_database_call_share(charts, out);
  add_time_split(charts, out);
  add_message_throughput(charts, out);
  return out;
}

json chart_json(const ReportChart& rc) {
  const Chart& c = rc.chart;
  json series = json::array();
  for (const ChartSeries& s : c.series) {
    series.push_back({{"name", s.name},
                      {"x", numbers(s.x)},
                      {"y", numbers(s.y)},
                      {"low", numbers(s.low)},
                      {"high", numbers(s.high)},
                      {"dashed", s.dashed}});
  }
  json shaded = json::array();
  for (const auto& [from, to] : c.shaded) {
    if (std::isfinite(from) && std::isfinite(to)) shaded.push_back({from, to});
  }
  return {{"kind", rc.kind},           {"title", c.title}, {"x_label", c.x_label},
          {"y_label", c.y_label},      {"series", series}, {"hlines", lines(c.hlines)},
          {"vlines", lines(c.vlines)}, {"shaded", shaded}};
}

std::string certainty_words(double p) {
  if (!std::isfinite(p)) return "no test statistic";
  if (p < 0.001) return "very sure (p < 0.001)";
  if (p < 0.01) return "sure (p < 0.01)";
  if (p < 0.05) return "fairly sure (p < 0.05)";
  return "not significant (p = " + heuristics::fmt(p, 2) + ")";
}

bool supports_finding(const Evidence& e) {
  for (const char* key : {"found", "violated", "significant"}) {
    const auto it = e.values.find(key);
    if (it != e.values.end() && it->is_boolean() && !it->get<bool>()) return false;
  }
  return true;
}

std::vector<std::string> look_at(const NodeResult& r, size_t max) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Evidence& e : r.evidence) {
    if (out.size() >= max) break;
    if (e.location.empty() || !supports_finding(e) || !seen.insert(e.location).second) continue;
    out.push_back(analysis::readable_type_names(e.location));
  }
  return out;
}

std::string node_description(const NodeResult& r) {
  const auto& registry = heuristic_registry();
  const auto it = registry.find(r.heuristic);
  return it == registry.end() ? "" : it->second->description();
}

}  // namespace sonde::diagnose
