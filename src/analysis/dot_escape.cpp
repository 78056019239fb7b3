#include "analysis/dot_escape.hpp"

#include <cstdint>

namespace sonde::analysis {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t b = byte(i);
  size_t len = 0;
  uint32_t cp = 0;
  if (b >= 0xc2 && b <= 0xdf) {
    len = 2;
    cp = b & 0x1fu;
  } else if (b >= 0xe0 && b <= 0xef) {
    len = 3;
    cp = b & 0x0fu;
  } else if (b >= 0xf0 && b <= 0xf4) {
    len = 4;
    cp = b & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0u) != 0x80u) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3fu);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return len;
}

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
