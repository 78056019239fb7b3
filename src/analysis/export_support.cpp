#include "analysis/export_support.hpp"

#include <cstdint>

#include "analysis/operation_signature.hpp"

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
  constexpr size_t npos = std::string_view::npos;
  std::string label;
  if (short_labels) {
    const std::string_view component = short_class_label(execution.component);
    const std::string operation = short_operation_label(execution.operation);
    if (!component.empty()) {
      label.append(component);
      // C++ signatures keep their own separator: "Tpl<int>::name(..)".
      if (!operation.empty()) label += execution.operation.find("::") == npos ? "." : "::";
    }
    label += operation;
  } else {
    label = execution.operation;
  }
  if (label.empty()) label = "[unknown]";
  return label;
}

namespace {

// Length of the valid UTF-8 sequence at the start of `s`, 0 if invalid.
size_t valid_sequence_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length;
  uint32_t min_code_point;
  uint32_t code_point;
  if ((lead & 0xE0) == 0xC0) {
    length = 2;
    min_code_point = 0x80;
    code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    min_code_point = 0x800;
    code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    min_code_point = 0x10000;
    code_point = lead & 0x07;
  } else {
    return 0;  // a continuation byte or 0xF8..0xFF as lead
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  if (code_point < min_code_point) return 0;                   // overlong
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;  // surrogate
  if (code_point > 0x10FFFF) return 0;
  return length;
}

}  // namespace

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t n = valid_sequence_length(text);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
    }
  }
  return out;
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
