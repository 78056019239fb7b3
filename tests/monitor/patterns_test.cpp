// Pattern rules: the last matching rule decides, whether it is an exact
// name (looked up by name) or a glob (matched in order).
#include "monitor/patterns.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace sonde::monitor {
namespace {

bool reference_monitored(const PatternSet& set, const std::string& name) {
  bool monitored = true;
  for (const PatternRule& r : set.rules())
    if (glob_match(r.glob, name)) monitored = r.include;
  return monitored;
}

TEST(Patterns, TheLastMatchingRuleDecidesAcrossExactNamesAndGlobs) {
  PatternSet set;
  ASSERT_EQ(set.parse("-*\n+a::f()\n-a::*\n+a::g()\n-n\n+n\n+m\n-m"), "");
  EXPECT_FALSE(set.monitored("a::f()")) << "-a::* comes after +a::f()";
  EXPECT_TRUE(set.monitored("a::g()")) << "+a::g() comes after -a::*";
  EXPECT_FALSE(set.monitored("b::h()")) << "only -* matches";
  EXPECT_TRUE(set.monitored("n")) << "the later of two exact rules";
  EXPECT_FALSE(set.monitored("m"));
  ASSERT_NE(set.deciding_rule("a::g()"), nullptr);
  EXPECT_EQ(set.deciding_rule("a::g()")->glob, "a::g()");
  PatternSet none;
  ASSERT_EQ(none.parse("+x::*"), "");
  EXPECT_EQ(none.deciding_rule("y"), nullptr);
  EXPECT_TRUE(none.monitored("y")) << "a name no rule matches is monitored";
}

// A culling report has thousands of exact names among a few globs: random
// rule sets of both kinds decide every name as reading the rules in order
// does.
TEST(Patterns, LookupsDecideAsTheRulesReadInOrder) {
  std::mt19937 rng(7);
  const std::vector<std::string> names = {"f",       "g",         "ns::f", "ns::g", "ns::h(int)",
                                          "x::y::z", "operator*", "a",     "ab",    "abc"};
  const std::vector<std::string> globs = {"*", "ns::*", "?", "a*", "*::z", "ns::?", "*(int)"};
  for (int round = 0; round < 500; ++round) {
    std::string text;
    const int rules = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < rules; ++i) {
      text += rng() % 2 ? '+' : '-';
      text += rng() % 3 == 0 ? globs[rng() % globs.size()] : names[rng() % names.size()];
      text += '\n';
    }
    PatternSet set;
    ASSERT_EQ(set.parse(text), "");
    for (const std::string& name : names)
      ASSERT_EQ(set.monitored(name), reference_monitored(set, name)) << text << "name " << name;
  }
}

}  // namespace
}  // namespace sonde::monitor
