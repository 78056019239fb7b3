#include "serve/diagnosis_report.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/model/operation_signature.hpp"
#include "diagnose/heuristic.hpp"
#include "diagnose/report_view.hpp"

namespace sonde::serve {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kReportFormat = "sonde-diagnosis/1";
constexpr std::array<const char*, 4> kStatuses = {"detected", "not_detected", "skipped",
                                                  "not_evaluated"};
// report_json() nests one level per hierarchy node; far deeper is not a report.
constexpr int kMaxReportDepth = 64;
constexpr std::uintmax_t kMaxReportBytes = 256u << 20;

std::string json_kind(const json& v) {
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_boolean()) return "true or false";
  if (v.is_null()) return "null";
  return "a string";
}

// Checks one key of `obj`; returns "" or "path.key: problem".
template <typename Pred>
std::string need_key(const json& obj, const std::string& path, const char* key, Pred ok,
                     const char* what) {
  const std::string where = path.empty() ? key : path + "." + key;
  if (!obj.contains(key)) return where + ": missing";
  if (!ok(obj.at(key))) return where + ": needs " + what + ", got " + json_kind(obj.at(key));
  return "";
}

bool report_string(const json& v) { return v.is_string(); }
bool report_count(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v >= 0);
}
bool report_number_or_null(const json& v) { return v.is_number() || v.is_null(); }

struct StatusTally {
  std::array<uint64_t, 4> by_status{};
};

std::string check_evidence(const json& e, const std::string& path) {
  if (!e.is_object()) return path + ": needs an object, got " + json_kind(e);
  for (const char* key : {"location", "test", "effect", "data", "detail"}) {
    if (auto err = need_key(e, path, key, report_string, "a string"); !err.empty()) return err;
  }
  for (const char* key : {"p_value", "effect_size"}) {
    if (auto err = need_key(e, path, key, report_number_or_null, "a number or null"); !err.empty())
      return err;
  }
  return need_key(
      e, path, "values", [](const json& v) { return v.is_object(); }, "an object");
}

std::string check_node(const json& n, const std::string& path, int depth, StatusTally& tally) {
  if (depth > kMaxReportDepth)
    return path + ": nested deeper than " + std::to_string(kMaxReportDepth);
  if (!n.is_object()) return path + ": needs an object, got " + json_kind(n);
  for (const char* key : {"id", "heuristic", "title", "status", "reason"}) {
    if (auto err = need_key(n, path, key, report_string, "a string"); !err.empty()) return err;
  }
  const std::string status = n.at("status").get<std::string>();
  size_t index = kStatuses.size();
  for (size_t i = 0; i < kStatuses.size(); ++i) {
    if (status == kStatuses[i]) index = i;
  }
  if (index == kStatuses.size()) {
    return path + ".status: needs detected, not_detected, skipped or not_evaluated, got '" +
           status.substr(0, 64) + "'";
  }
  ++tally.by_status[index];
  const auto is_array = [](const json& v) { return v.is_array(); };
  if (auto err = need_key(
          n, path, "charts", [](const json& v) { return v.is_object(); }, "an object");
      !err.empty())
    return err;
  for (const char* key : {"evidence", "children"}) {
    if (auto err = need_key(n, path, key, is_array, "an array"); !err.empty()) return err;
  }
  const json& evidence = n.at("evidence");
  for (size_t i = 0; i < evidence.size(); ++i) {
    const std::string p = path + ".evidence[" + std::to_string(i) + "]";
    if (auto err = check_evidence(evidence[i], p); !err.empty()) return err;
  }
  const json& children = n.at("children");
  for (size_t i = 0; i < children.size(); ++i) {
    const std::string p = path + ".children[" + std::to_string(i) + "]";
    if (auto err = check_node(children[i], p, depth + 1, tally); !err.empty()) return err;
  }
  return "";
}

// Shown as report.html shows them (docs/diagnose/report.md): the
// standard library's types in operation and lock-site names as the code
// spells them.
void make_readable(json& text) {
  if (text.is_string()) text = analysis::readable_type_names(text.get<std::string>());
}

// The node as the diagnosis computed it, for the functions report.html is
// drawn with (diagnose/report_view.hpp). Only what they read.
diagnose::NodeResult node_for_view(const json& node) {
  diagnose::NodeResult r;
  r.heuristic = node.at("heuristic").get<std::string>();
  r.charts = node.at("charts");
  for (const json& e : node.at("evidence")) {
    diagnose::Evidence ev;
    ev.location = e.at("location").get<std::string>();
    if (e.at("p_value").is_number()) ev.p_value = e.at("p_value").get<double>();
    ev.values = e.at("values");
    r.evidence.push_back(std::move(ev));
  }
  return r;
}

// The answer carries, per node, what report.html shows and web/diagnosis.js
// draws without deciding anything itself: the problem's description, each
// evidence row's certainty in words and whether it supports the finding,
// where to look first, the charts as line charts ("plots"), and readable
// names. Computed here, from any report.json sonde wrote, by the same code
// as report.html.
void prepare_for_display(json& node) {
  const diagnose::NodeResult r = node_for_view(node);
  node["description"] = diagnose::node_description(r);
  node["look_at"] = diagnose::look_at(r);
  json plots = json::array();
  for (const diagnose::ReportChart& c : diagnose::report_charts(r.charts))
    plots.push_back(diagnose::chart_json(c));
  node["plots"] = std::move(plots);
  make_readable(node.at("reason"));
  json& evidence = node.at("evidence");
  for (size_t i = 0; i < evidence.size(); ++i) {
    json& e = evidence[i];
    e["certainty"] = diagnose::certainty_words(r.evidence[i].p_value);
    e["supports_finding"] = diagnose::supports_finding(r.evidence[i]);
    make_readable(e.at("location"));
    make_readable(e.at("detail"));
  }
  for (json& child : node.at("children")) prepare_for_display(child);
}

}  // namespace

std::string check_diagnosis_report(const json& doc) {
  if (!doc.is_object()) return "the report needs to be a JSON object, got " + json_kind(doc);
  if (auto err = need_key(doc, "", "format", report_string, "a string"); !err.empty()) return err;
  if (doc.at("format") != kReportFormat) {
    return "format: needs '" + std::string(kReportFormat) + "', got '" +
           doc.at("format").get<std::string>().substr(0, 64) + "'";
  }
  for (const char* key : {"data", "incomplete_reason"}) {
    if (auto err = need_key(doc, "", key, report_string, "a string"); !err.empty()) return err;
  }
  if (auto err = need_key(
          doc, "", "complete", [](const json& v) { return v.is_boolean(); }, "true or false");
      !err.empty())
    return err;
  if (auto err = need_key(doc, "", "experiments", report_count, "a non-negative integer");
      !err.empty())
    return err;
  if (auto err = need_key(
          doc, "", "counts", [](const json& v) { return v.is_object(); }, "an object");
      !err.empty())
    return err;
  for (const char* key : kStatuses) {
    if (auto err =
            need_key(doc.at("counts"), "counts", key, report_count, "a non-negative integer");
        !err.empty())
      return err;
  }
  // Optional (reports before warnings existed have none).
  if (doc.contains("warnings")) {
    const json& warnings = doc.at("warnings");
    if (!warnings.is_array()) return "warnings: needs an array, got " + json_kind(warnings);
    for (size_t i = 0; i < warnings.size(); ++i) {
      if (!warnings[i].is_string())
        return "warnings[" + std::to_string(i) + "]: needs a string, got " + json_kind(warnings[i]);
    }
  }
  if (!doc.contains("root")) return "root: missing";
  StatusTally tally;
  if (auto err = check_node(doc.at("root"), "root", 0, tally); !err.empty()) return err;
  // The summary shows the counts: they must say what the tree says.
  for (size_t i = 0; i < kStatuses.size(); ++i) {
    const uint64_t said = doc.at("counts").at(kStatuses[i]).get<uint64_t>();
    if (said != tally.by_status[i]) {
      return std::string("counts.") + kStatuses[i] + ": says " + std::to_string(said) +
             ", the tree has " + std::to_string(tally.by_status[i]) + " such nodes";
    }
  }
  return "";
}

std::variant<std::shared_ptr<const DiagnosisReport>, std::string> load_diagnosis_report(
    const std::string& path) {
  std::error_code ec;
  const std::string file =
      fs::is_directory(path, ec) ? (fs::path(path) / "report.json").string() : path;
  if (!fs::is_regular_file(file, ec)) {
    return file + ": no such file (give a report.json or the --out directory of sonde diagnose)";
  }
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) return file + ": cannot read: " + ec.message();
  if (size > kMaxReportBytes)
    return file + ": " + std::to_string(size) + " bytes, too large for a report";
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return file + ": cannot read";
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::exception& e) {
    // nlohmann's message names the line and column.
    return file + ": not valid JSON: " + e.what();
  }
  if (std::string err = check_diagnosis_report(doc); !err.empty()) return file + ": " + err;
  prepare_for_display(doc.at("root"));
  auto report = std::make_shared<DiagnosisReport>();
  report->file = file;
  report->body = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  return std::shared_ptr<const DiagnosisReport>(std::move(report));
}

}  // namespace sonde::serve
