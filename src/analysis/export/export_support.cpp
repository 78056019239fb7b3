#include "analysis/export/export_support.hpp"

#include <cstdint>

#include "analysis/model/operation_signature.hpp"
#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {

StitchedTrace one_part_stitched_trace(const Trace& trace) {
  StitchedTrace stitched;
  stitched.parts.push_back(SubTrace{trace, -1, -1});
  return stitched;
}

void OnePartStitchedTraceSink::on_trace(const Trace& trace) {
  out_.on_stitched_trace(one_part_stitched_trace(trace));
}

std::string execution_label(const Execution& execution, bool short_labels) {
  std::string label =
      operation_display_label(execution.component, execution.operation, short_labels);
  if (label.empty()) label = "[unknown]";
  return label;
}

std::string json_quote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string valid = to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size() + 2);
  out += '"';
  for (const char c : valid) {
    const auto u = static_cast<uint8_t>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace sonde::analysis
