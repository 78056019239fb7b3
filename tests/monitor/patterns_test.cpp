// Pattern rules: the last matching rule decides, whether it is an exact
// name (looked up by name) or a glob (matched in order).
#include "monitor/patterns.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "format/function_name.hpp"

namespace sonde::monitor {

using format::without_return_type;
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

namespace sonde::monitor {
namespace {

TEST(Patterns, FunctionsAreMatchedWithoutTheReturnTypeOfTemplateInstances) {
  const std::string_view helper =
      "(anonymous namespace)::Db* std::__get_helper<0ul, (anonymous namespace)::Db*>(std::"
      "_Tuple_impl<0ul, (anonymous namespace)::Db*>&)";
  EXPECT_EQ(without_return_type(helper),
            "std::__get_helper<0ul, (anonymous namespace)::Db*>(std::_Tuple_impl<0ul, (anonymous "
            "namespace)::Db*>&)");
  PatternSet pins;
  ASSERT_EQ(pins.parse("-*;+(anonymous namespace)::*"), "");
  EXPECT_FALSE(pins.monitored(without_return_type(helper)));
  EXPECT_TRUE(pins.monitored(without_return_type("(anonymous namespace)::report(int, double)")));
  // Names without a return type, operators and conversion operators stay whole.
  for (std::string_view name :
       {std::string_view("shapes::make(int, double)"), std::string_view("main"),
        std::string_view("std::vector<int, std::allocator<int> >::size() const"),
        std::string_view("Foo::operator bool() const"),
        std::string_view("Foo::operator std::vector<int, std::allocator<int> >() const"),
        std::string_view("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, "
                         "char const*)"),
        std::string_view("Foo::operator()(int)"), std::string_view("operator new[](unsigned long)"),
        std::string_view("(anonymous namespace)::Shop::handle(int)")}) {
    const std::string_view stripped = without_return_type(name);
    if (name.rfind("std::ostream& ", 0) == 0) {
      EXPECT_EQ(stripped, "std::operator<< <std::char_traits<char> >(std::ostream&, char const*)");
    } else {
      EXPECT_EQ(stripped, name);
    }
  }
  EXPECT_EQ(without_return_type("unsigned long leveldb::Hash<int>(char const*, unsigned long)"),
            "leveldb::Hash<int>(char const*, unsigned long)");
}

TEST(Patterns, AnExactRuleCanBeLookedUpByItsWholeName) {
  PatternSet set;
  // (A '*' in a name makes a line a glob: culling reports write it '?'.)
  ASSERT_EQ(set.parse("-Db& get<0>(Tuple&);-get*;+get<1>(Tuple&)"), "");
  ASSERT_NE(set.exact_rule("Db& get<0>(Tuple&)"), nullptr);
  EXPECT_FALSE(set.exact_rule("Db& get<0>(Tuple&)")->include);
  ASSERT_NE(set.exact_rule("get<1>(Tuple&)"), nullptr);
  EXPECT_TRUE(set.exact_rule("get<1>(Tuple&)")->include);
  EXPECT_EQ(set.exact_rule("get<2>(Tuple&)"), nullptr);  // only a wildcard matches it
}

}  // namespace
}  // namespace sonde::monitor

namespace sonde::monitor {
namespace {

// A name copied from one of sonde's views (format/operation_name.hpp) is a
// pattern that matches the function it names.
TEST(Patterns, NamesAsTheViewsShowThemMatchTheirFunctions) {
  const std::string_view recorded =
      "void shop::Shop::cross_bridge(std::__cxx11::basic_string<char, std::char_traits<char>, "
      "std::allocator<char> > const&)";
  PatternSet set;
  // 1 included, 0 excluded, -1 no rule decides.
  auto decided = [&](std::string_view qualified) {
    const PatternRule* r = set.deciding_rule_for_function(qualified);
    return r == nullptr ? -1 : r->include ? 1 : 0;
  };
  ASSERT_EQ(set.parse("-*;+shop::Shop::cross_bridge(std::string const&)"), "");
  EXPECT_EQ(decided(without_return_type(recorded)), 1);
  ASSERT_EQ(set.parse("-*;+std::vector<int>::*"), "");
  EXPECT_EQ(decided("std::vector<int, std::allocator<int> >::size() const"), 1);
  EXPECT_EQ(decided("std::vector<long, std::allocator<long> >::size() const"), 0);
  // The later rule decides, whichever form it matched.
  ASSERT_EQ(set.parse("+shop::*;-shop::Shop::cross_bridge(std::string const&)"), "");
  EXPECT_EQ(decided(without_return_type(recorded)), 0);
  ASSERT_EQ(set.parse("-shop::Shop::cross_bridge(std::string const&);+shop::*"), "");
  EXPECT_EQ(decided(without_return_type(recorded)), 1);
  // The spelled-out form still matches as before.
  ASSERT_EQ(set.parse("-*;+shop::Shop::cross_bridge(std::__cxx11::basic_string*"), "");
  EXPECT_EQ(decided(without_return_type(recorded)), 1);
}

}  // namespace
}  // namespace sonde::monitor
