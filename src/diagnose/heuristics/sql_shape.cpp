#include "diagnose/heuristics/sql_shape.hpp"

#include <cctype>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sonde::diagnose::heuristics {
namespace {

struct SqlToken {
  std::string text;
  bool space_before = false;
};

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '?' ||
         c == '.';
}

std::vector<SqlToken> tokenize(const std::string& shape) {
  std::vector<SqlToken> out;
  bool space = false;
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] == ' ') {
      space = true;
      ++i;
      continue;
    }
    size_t j = i + 1;
    if (is_word_char(shape[i])) {
      while (j < shape.size() && is_word_char(shape[j])) ++j;
    }
    out.push_back({shape.substr(i, j - i), space});
    space = false;
    i = j;
  }
  return out;
}

std::string join(const std::vector<SqlToken>& tokens) {
  std::string out;
  for (const SqlToken& t : tokens) {
    if (t.space_before && !out.empty()) out += ' ';
    out += t.text;
  }
  return out;
}

bool same_text(const std::vector<SqlToken>& t, size_t a, size_t b, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    if (t[a + k].text != t[b + k].text) return false;
  }
  return true;
}

// A part worth collapsing: it holds a parameter and its parentheses match,
// so "((" or ") , (" never collapse.
bool is_value_part(const std::vector<SqlToken>& t, size_t at, size_t n) {
  int depth = 0;
  bool parameter = false;
  for (size_t k = at; k < at + n; ++k) {
    const std::string& s = t[k].text;
    if (s == "(") ++depth;
    if (s == ")" && --depth < 0) return false;
    if (s.find('?') != std::string::npos) parameter = true;
  }
  return depth == 0 && parameter;
}

// The end of the run of parts of `n` tokens that starts at `at`, each
// after a comma when `comma`, else back to back; `at + n` when no run.
size_t run_end(const std::vector<SqlToken>& t, size_t at, size_t n, bool comma) {
  const size_t sep = comma ? 1 : 0;
  size_t end = at + n;
  while (end + sep + n <= t.size() && (!comma || t[end].text == ",") &&
         same_text(t, at, end + sep, n))
    end += sep + n;
  return end;
}

// One pass for parts of `n` tokens: "P, P, P" becomes "P, ..." and "P P P"
// becomes "P ...". Returns whether anything changed.
bool collapse_runs(std::vector<SqlToken>& t, size_t n) {
  std::vector<SqlToken> out;
  bool changed = false;
  size_t i = 0;
  while (i < t.size()) {
    bool collapsed = false;
    // A run starts with the part's first token again, n or n + 1 (after a
    // comma) tokens on: most positions fail this cheap test.
    const bool may_repeat =
        i + 2 * n <= t.size() && (t[i + n].text == t[i].text ||
                                  (i + 2 * n + 1 <= t.size() && t[i + n + 1].text == t[i].text));
    if (may_repeat && is_value_part(t, i, n)) {
      // Single tokens repeat only in comma lists ("? ?" is not a list).
      for (bool comma : {true, false}) {
        if (!comma && n < 2) continue;
        const size_t end = run_end(t, i, n, comma);
        if (end == i + n) continue;
        out.insert(out.end(), t.begin() + static_cast<std::ptrdiff_t>(i),
                   t.begin() + static_cast<std::ptrdiff_t>(i + n));
        if (comma) out.push_back({",", false});
        out.push_back({"...", true});
        i = end;
        collapsed = true;
        break;
      }
    }
    if (collapsed) {
      changed = true;
    } else {
      out.push_back(t[i]);
      ++i;
    }
  }
  if (changed) t = std::move(out);
  return changed;
}

constexpr size_t kLongestPart = 32;  // tokens; a CASE branch is about ten

std::string collapse_value_lists(const std::string& shape) {
  std::vector<SqlToken> tokens = tokenize(shape);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t n = 1; n <= kLongestPart && n * 2 <= tokens.size(); ++n) {
      if (collapse_runs(tokens, n)) changed = true;
    }
  }
  return join(tokens);
}

}  // namespace

namespace {

std::string compute_sql_shape(std::string_view sql);

}  // namespace

// Three heuristics ask for the shape of every DatabaseCall record, and a
// program sends the same few statement texts again and again: remember
// them (bounded, so a program that writes every key into its statements
// cannot grow this without limit).
std::string sql_shape(std::string_view sql) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> known;
  constexpr std::size_t kMaxKnown = 100'000;
  std::lock_guard lock(mutex);
  if (auto it = known.find(std::string(sql)); it != known.end()) return it->second;
  std::string shape = compute_sql_shape(sql);
  if (known.size() >= kMaxKnown) known.clear();
  known.emplace(std::string(sql), shape);
  return shape;
}

namespace {

std::string compute_sql_shape(std::string_view sql) {
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
  return collapse_value_lists(out);
}

}  // namespace

}  // namespace sonde::diagnose::heuristics
