// Include/exclude rules for adaptive monitoring, in Kieker's line format:
// "+glob" includes, "-glob" excludes, "#" starts a comment. Globs match the
// whole operation name ('*' any run of characters, '?' one character). The
// last matching rule wins; a name no rule matches is monitored.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sonde::monitor {

struct PatternRule {
  bool include;
  std::string glob;
};

class PatternSet {
 public:
  // Parses lines (newline- or ';'-separated). Returns "" or an error naming
  // the bad line; on error the set is unchanged.
  std::string parse(std::string_view text);
  bool monitored(std::string_view name) const;
  // The rule that decides `name`: the last one that matches it; nullptr
  // when none does.
  const PatternRule* deciding_rule(std::string_view name) const;
  // deciding_rule of a function's qualified name (without its return
  // type), read as recorded and as sonde's views show it
  // (format/operation_name.hpp: "std::string", no default template
  // arguments), so that a name copied from a view is a pattern that
  // matches. Of the two, the later rule decides.
  const PatternRule* deciding_rule_for_function(std::string_view qualified) const;
  // The last rule without a wildcard that is exactly `name`; nullptr if none.
  const PatternRule* exact_rule(std::string_view name) const;
  bool empty() const { return rules_.empty(); }
  const std::vector<PatternRule>& rules() const { return rules_; }

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<PatternRule> rules_;
  // A rule without '*' or '?' matches one name, so it is looked up by that
  // name (the index of the last such rule per name): a culling report's
  // thousands of "-name" lines cost one lookup per function instead of one
  // comparison per rule. Every function symbol of the process is matched
  // on each rebuild of the function filter, the first at start-up.
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> exact_;
  std::vector<size_t> wildcard_;     // indices of the other rules, in order
  bool shown_form_matters_ = false;  // deciding_rule_for_function
};

bool glob_match(std::string_view glob, std::string_view text);

}  // namespace sonde::monitor
