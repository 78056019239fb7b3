// The diagnosis view of `sonde serve` (docs/serve.md): a report.json that
// `sonde diagnose` wrote (format `sonde-diagnosis/1`,
// docs/diagnose/report.md), read and checked once at serve start, then
// answered by GET /api/diagnosis.
//
// The check is strict, so the browser can trust the shape it draws: every
// key report_json() writes must be there with its type, statuses must be
// one of the four, and the counts must match the tree. A failure names the
// file and the key path (e.g. "root.children[2].status").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

namespace sonde::serve {

struct DiagnosisReport {
  std::string file;  // the report.json read
  std::string body;  // the answer of /api/diagnosis (report plus node descriptions)
};

// `path` is a report.json or a directory holding one (`sonde diagnose --out`).
// Returns the report or an error "FILE: problem".
std::variant<std::shared_ptr<const DiagnosisReport>, std::string> load_diagnosis_report(
    const std::string& path);

// "" if `doc` is a well-formed sonde-diagnosis/1 report, else "key.path: problem".
std::string check_diagnosis_report(const nlohmann::json& doc);

}  // namespace sonde::serve
