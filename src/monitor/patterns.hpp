// Include/exclude rules for adaptive monitoring, in Kieker's line format:
// "+glob" includes, "-glob" excludes, "#" starts a comment. Globs match the
// whole operation name ('*' any run of characters, '?' one character). The
// last matching rule wins; a name no rule matches is monitored.
#pragma once

#include <string>
#include <string_view>
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
  bool empty() const { return rules_.empty(); }
  const std::vector<PatternRule>& rules() const { return rules_; }

 private:
  std::vector<PatternRule> rules_;
};

bool glob_match(std::string_view glob, std::string_view text);

}  // namespace sonde::monitor
