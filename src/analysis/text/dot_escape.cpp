#include "analysis/text/dot_escape.hpp"

#include <cstdint>

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {
namespace {

void append_escaped(std::string& out, std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<uint8_t>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else if (u >= 0x80) {
      const size_t len = utf8_sequence_length(text, i);
      if (len == 0) {
        out += '?';
      } else {
        out.append(text.substr(i, len));
        i += len;
        continue;
      }
    } else {
      out += c;
    }
    ++i;
  }
}

}  // namespace

std::string dot_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  append_escaped(out, text);
  out += '"';
  return out;
}

std::string dot_label(std::span<const std::string> lines) {
  std::string out = "\"";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += "\\n";
    append_escaped(out, lines[i]);
  }
  out += '"';
  return out;
}

}  // namespace sonde::analysis
