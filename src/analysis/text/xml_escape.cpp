#include "analysis/text/xml_escape.hpp"

#include "analysis/text/utf8_scan.hpp"

namespace sonde::analysis {

std::string xml_escape(std::string_view text) {
  std::string valid = to_valid_utf8(text);
  // U+FFFE and U+FFFF are valid UTF-8 but not XML characters.
  for (const std::string_view bad : {"\xEF\xBF\xBE", "\xEF\xBF\xBF"}) {
    for (size_t at; (at = valid.find(bad)) != std::string::npos;)
      valid.replace(at, 3, "\xEF\xBF\xBD");
  }
  std::string out;
  out.reserve(valid.size());
  for (const char c : valid) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
      out += ' ';  // not allowed in XML 1.0, not even as a character reference
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace sonde::analysis
