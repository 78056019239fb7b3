#include "diagnose/heuristics/sql_shape.hpp"

#include <cctype>

namespace sonde::diagnose::heuristics {

std::string sql_shape(std::string_view sql) {
  std::string out;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      // A quoted literal ('' escapes a quote inside).
      size_t j = i + 1;
      while (j < sql.size()) {
        if (sql[j] == c && j + 1 < sql.size() && sql[j + 1] == c) {
          j += 2;
        } else if (sql[j] == c) {
          break;
        } else {
          ++j;
        }
      }
      if (c == '\'')
        out += '?';
      else
        out.append(sql.substr(i, j + 1 - i));
      i = j + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c)) &&
               (out.empty() || !is_word(out.back()))) {
      size_t j = i;
      while (j < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '.'))
        ++j;
      out += '?';
      i = j;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
      if (!out.empty()) out += ' ';
    } else {
      out += c;
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace sonde::diagnose::heuristics
