#include "format/context_fences.hpp"

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

namespace sonde::format {
namespace {

using nlohmann::json;

bool parse_key(const json& v, uint64_t* out) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && end == s.data() + s.size() && s.size() == 16;
}

}  // namespace

std::string context_model_format_error(const std::string& format) {
  if (format == kContextModelFormat) return "";
  std::string error =
      "format is '" + format.substr(0, 60) + "', expected '" + kContextModelFormat + "'";
  if (format == "sonde-context-model/1") {
    error +=
        " (saved before operations were named as C++ writes them: save it again from its "
        "log with `sonde context LOG --save-model FILE`)";
  }
  return error;
}

namespace {

std::string read(const json& doc, ContextFences* out) {
  if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string())
    return "not a saved context model (no 'format')";
  if (std::string error = context_model_format_error(doc["format"].get<std::string>());
      !error.empty())
    return error;
  if (doc.contains("source") && doc["source"].is_object() && doc["source"].contains("log") &&
      doc["source"]["log"].is_string()) {
    out->source = doc["source"]["log"].get<std::string>();
  }
  if (!doc.contains("references") || !doc["references"].is_array()) return "no 'references' array";
  if (!doc.contains("trace_contexts") || !doc["trace_contexts"].is_array()) {
    return "no 'trace_contexts' array";
  }
  const json& refs = doc["references"];
  // Each reference's own fence; a trace context is scored with its entity's.
  std::vector<ContextFence> fence(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    const json& r = refs[i];
    for (const char* k : {"q1", "median", "q3"}) {
      if (!r.is_object() || !r.contains(k) || !r[k].is_number()) {
        return "reference " + std::to_string(i) + " has no number '" + k + "'";
      }
    }
    if (!r.contains("entity") || !r["entity"].is_number_unsigned() ||
        r["entity"].get<uint64_t>() >= refs.size()) {
      return "reference " + std::to_string(i) + " has no 'entity' index in range";
    }
    fence[i] = make_context_fence(r["q1"].get<double>(), r["median"].get<double>(),
                                  r["q3"].get<double>(), r["entity"].get<uint32_t>());
  }
  for (const json& tc : doc["trace_contexts"]) {
    uint64_t key = 0;
    if (!tc.is_array() || tc.size() != 2 || !parse_key(tc[0], &key)) {
      return "a trace context is not [16 hex digits, reference]";
    }
    if (!tc[1].is_number_unsigned() || tc[1].get<uint64_t>() >= refs.size()) {
      return "trace context " + tc[0].get<std::string>() + " names no reference in range";
    }
    const ContextFence& leaf = fence[tc[1].get<size_t>()];
    out->by_trace_context[key] = fence[leaf.entity];
  }
  return "";
}

}  // namespace

std::string read_context_fences(const std::string& path, ContextFences* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open it";
  ContextFences fences;
  try {
    if (std::string err = read(json::parse(in), &fences); !err.empty()) return err;
  } catch (const std::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
  *out = std::move(fences);
  return "";
}

}  // namespace sonde::format
