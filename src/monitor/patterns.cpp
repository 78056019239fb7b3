#include "monitor/patterns.hpp"

#include <functional>

#include "format/operation_name.hpp"

namespace sonde::monitor {

bool glob_match(std::string_view glob, std::string_view text) {
  // Iterative matcher with one backtrack point: linear in practice and no
  // recursion, so hostile patterns cannot blow the stack.
  size_t g = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == text[t])) {
      ++g;
      ++t;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

std::string PatternSet::parse(std::string_view text) {
  std::vector<PatternRule> rules;
  int line_no = 0;
  while (!text.empty()) {
    size_t end = text.find_first_of("\n;");
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_no;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') continue;
    if (line.front() != '+' && line.front() != '-') {
      return "pattern line " + std::to_string(line_no) + " '" + std::string(line) +
             "' must start with '+' (include) or '-' (exclude)";
    }
    std::string_view glob = line.substr(1);
    while (!glob.empty() && glob.front() == ' ') glob.remove_prefix(1);
    if (glob.empty()) return "pattern line " + std::to_string(line_no) + " has no pattern";
    rules.push_back({line.front() == '+', std::string(glob)});
  }
  rules_ = std::move(rules);
  exact_.clear();
  wildcard_.clear();
  // Only a rule naming standard types or template arguments can tell the
  // two forms apart: without one, skip reading every template instance's
  // name a second time (a few microseconds per long template name, for
  // each of a large program's symbols on each rebuild of the function
  // filter).
  shown_form_matters_ = false;
  for (const PatternRule& r : rules_)
    shown_form_matters_ |= r.glob.find_first_of("<>") != std::string::npos ||
                           r.glob.find("std::") != std::string::npos;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (rules_[i].glob.find_first_of("*?") == std::string::npos)
      exact_[rules_[i].glob] = i;  // a later rule for the same name replaces the index
    else
      wildcard_.push_back(i);
  }
  return "";
}

const PatternRule* PatternSet::deciding_rule(std::string_view name) const {
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t last = kNone;
  if (auto it = exact_.find(name); it != exact_.end()) last = it->second;
  // The last wildcard rule that matches, if it comes after the exact one.
  for (auto k = wildcard_.rbegin(); k != wildcard_.rend(); ++k) {
    if (last != kNone && *k < last) break;
    if (glob_match(rules_[*k].glob, name)) {
      last = *k;
      break;
    }
  }
  return last == kNone ? nullptr : &rules_[last];
}

const PatternRule* PatternSet::deciding_rule_for_function(std::string_view qualified) const {
  const PatternRule* r = deciding_rule(qualified);
  if (!shown_form_matters_ || qualified.find('<') == std::string_view::npos) return r;
  const std::string shown = format::readable_type_names(qualified);
  if (shown == qualified) return r;
  const PatternRule* as_shown = deciding_rule(shown);
  if (as_shown == nullptr) return r;
  return r == nullptr || std::less<const PatternRule*>()(r, as_shown) ? as_shown : r;
}

const PatternRule* PatternSet::exact_rule(std::string_view name) const {
  auto it = exact_.find(name);
  return it == exact_.end() ? nullptr : &rules_[it->second];
}

bool PatternSet::monitored(std::string_view name) const {
  const PatternRule* r = deciding_rule(name);
  return r == nullptr || r->include;
}

}  // namespace sonde::monitor
