#include "format/operation_name.hpp"

#include <gtest/gtest.h>

#include "format/function_name.hpp"
#include "format/kieker_signature.hpp"

namespace sonde::format {
namespace {

OperationName cpp(std::string_view name, std::string_view module = "/opt/app/bin/shapes") {
  return operation_name(name, module, NameForm::kCpp);
}

TEST(OperationName, CppNamesKeepTheScopeAndDropTheReturnType) {
  EXPECT_EQ(cpp("shapes::make(int, double)").operation, "shapes::make(int, double)");
  EXPECT_EQ(cpp("shapes::make(int, double)").component, "shapes");
  const OperationName member = cpp("int ns::Tpl<int, char>::name(int) const");
  EXPECT_EQ(member.operation, "ns::Tpl<int, char>::name(int) const");
  EXPECT_EQ(member.component, "ns::Tpl<int, char>");
  // A free function: its module is the component.
  EXPECT_EQ(cpp("main", "/opt/app/bin/example-autoinst").operation, "main");
  EXPECT_EQ(cpp("main", "/opt/app/bin/example-autoinst").component, "example_autoinst");
  EXPECT_EQ(cpp("compress(char const*)", "/usr/lib/libz.so.1").component, "z");
}

TEST(OperationName, AnonymousNamespacesAndOperatorsAreNoReturnType) {
  const OperationName anon = cpp("(anonymous namespace)::report(int, double, int)");
  EXPECT_EQ(anon.operation, "(anonymous namespace)::report(int, double, int)");
  EXPECT_EQ(anon.component, "(anonymous namespace)");
  const OperationName helper =
      cpp("(anonymous namespace)::Db* std::__get_helper<0ul, (anonymous namespace)::Db*>(std::"
          "_Tuple_impl<0ul, (anonymous namespace)::Db*>&)");
  EXPECT_EQ(helper.operation,
            "std::__get_helper<0ul, (anonymous namespace)::Db*>(std::_Tuple_impl<0ul, (anonymous "
            "namespace)::Db*>&)");
  EXPECT_EQ(helper.component, "std");
  EXPECT_EQ(cpp("shapes::Point::operator<(shapes::Point const&) const").component, "shapes::Point");
  EXPECT_EQ(cpp("shapes::Point::operator()(int)").component, "shapes::Point");
  EXPECT_EQ(cpp("shapes::Box::operator shapes::Point() const").component, "shapes::Box");
}

// What the symbolizer recorded, and how every view shows it.
struct Spelling {
  const char* recorded;
  const char* shown;
};

TEST(OperationName, StandardTypesReadAsTheCodeWritesThem) {
  const OperationName v =
      cpp("std::vector<std::unique_ptr<shapes::Shape, std::default_delete<shapes::Shape> >, "
          "std::allocator<std::unique_ptr<shapes::Shape, std::default_delete<shapes::Shape> > > "
          ">::size() const");
  EXPECT_EQ(v.operation, "std::vector<std::unique_ptr<shapes::Shape>>::size() const");
  EXPECT_EQ(v.component, "std::vector<std::unique_ptr<shapes::Shape>>");
  const Spelling spellings[] = {
      {"shop::Shop::cross_bridge(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       "shop::Shop::cross_bridge(std::string const&)"},
      {"f(std::map<int, long, std::less<int>, std::allocator<std::pair<int const, long> > > "
       "const&)",
       "f(std::map<int, long> const&)"},
      // Arguments that are not the defaults stay; so does a first argument.
      {"f(std::set<int, std::greater<int>, my::Alloc<int> >)",
       "f(std::set<int, std::greater<int>, my::Alloc<int>>)"},
      {"g(std::allocator<int>&)", "g(std::allocator<int>&)"},
      // Only trailing defaults, and only what the template would have
      // chosen: two different types never get one name.
      {"f(std::set<int, std::less<void>, std::allocator<int> >)",
       "f(std::set<int, std::less<void>>)"},
      {"f(std::map<int, int, std::less<int>, my::Alloc<std::pair<int const, int> > >)",
       "f(std::map<int, int, std::less<int>, my::Alloc<std::pair<int const, int>>>)"},
      {"f(std::vector<int, std::allocator<long> >)", "f(std::vector<int, std::allocator<long>>)"},
      {"f(std::pair<int, std::hash<int> >)", "f(std::pair<int, std::hash<int>>)"},
      // unique_ptr's internals: a deleter that is an argument, not a default.
      {"std::__get_helper<1ul, std::default_delete<Foo> >(std::_Tuple_impl<1ul, "
       "std::default_delete<Foo> >&)",
       "std::__get_helper<1ul, std::default_delete<Foo>>(std::_Tuple_impl<1ul, "
       "std::default_delete<Foo>>&)"},
      // The old ABI's string is another type than std::__cxx11's.
      {"f(std::basic_string<char, std::char_traits<char>, std::allocator<char> >)",
       "f(std::basic_string<char>)"},
      // An allocator among a function type's parameters is no default argument.
      {"h(std::function<void (int, std::allocator<int>)>)",
       "h(std::function<void (int, std::allocator<int>)>)"},
      // Every "> >" closes, however deep.
      {"a::X<a::Y<a::Z<int> > >::f()", "a::X<a::Y<a::Z<int>>>::f()"},
  };
  for (const Spelling& s : spellings) EXPECT_EQ(cpp(s.recorded).operation, s.shown) << s.recorded;
  EXPECT_NE(cpp("std::get<0ul, Foo*, std::default_delete<Foo> >(std::tuple<Foo*, "
                "std::default_delete<Foo> >&)")
                .operation,
            cpp("std::get<0ul, Foo*>(std::tuple<Foo*>&)").operation);
  EXPECT_EQ(readable_type_names(readable_type_names("std::optional<std::optional<int> >")),
            "std::optional<std::optional<int>>");
}

OperationName manual(std::string_view name, std::string_view module = "/srv/shop") {
  return operation_name(name, module, NameForm::kCpp, native::OperationKind::kManual);
}

TEST(OperationName, ManualProbesKeepTheirNamesAndCompilerClonesTheirFunction) {
  EXPECT_EQ(manual("shop.Catalog.getBook").operation, "shop.Catalog.getBook");
  EXPECT_EQ(manual("shop.Catalog.getBook").component, "shop.Catalog");
  EXPECT_EQ(manual("shop.Catalog.getBook(int)").component, "shop.Catalog");
  EXPECT_EQ(manual("checkout").component, "shop");
  // A manual name's words are its own: nothing is a return type.
  EXPECT_EQ(manual("GET /items").operation, "GET /items");
  EXPECT_NE(manual("GET /items").operation, manual("POST /items").operation);
  EXPECT_EQ(manual("GET /items").component, "shop");
  EXPECT_EQ(manual("GET /items (cached)").operation, "GET /items (cached)");
  // SONDE_SCOPE() names its probe by __PRETTY_FUNCTION__: read as a function.
  const OperationName pretty = manual(
      "void shop::Shop::checkout(const std::__cxx11::basic_string<char, std::char_traits<char>, "
      "std::allocator<char> >&)");
  EXPECT_EQ(pretty.operation, "shop::Shop::checkout(const std::string&)");
  EXPECT_EQ(pretty.component, "shop::Shop");
  EXPECT_EQ(cpp("shop.Catalog.getBook(int)").component, "shop.Catalog");
  EXPECT_EQ(cpp("checkout", "/srv/shop").component, "shop");
  EXPECT_EQ(cpp("parse.constprop.0", "/srv/shop").component, "shop");
  EXPECT_EQ(cpp("emit.cold", "/srv/shop").component, "shop");
}

TEST(OperationName, KiekerFormIsKiekersSignature) {
  const OperationName k =
      operation_name("shapes::make(int, double)", "/bin/shapes", NameForm::kKieker);
  EXPECT_EQ(k.operation, "shapes.make(int, double)");
  EXPECT_EQ(k.component, "shapes");
  EXPECT_EQ(kieker_signature("main", "/opt/app/bin/example-autoinst").operation,
            "example_autoinst.main()");
  // The space inside "(anonymous namespace)" is no return type's end.
  EXPECT_EQ(kieker_signature("(anonymous namespace)::report(int)", "/bin/app").operation,
            "(anonymous namespace).report(int)");
  EXPECT_EQ(kieker_signature("void ns::f(std::map<int, int>)", "/bin/app").operation,
            "void ns.f(std.map<int| int>)");
}

TEST(OperationName, FunctionNamesDivideIntoReturnTypeScopeAndParameters) {
  constexpr std::string_view name = "unsigned long leveldb::Hash<int>(char const*, unsigned long)";
  constexpr FunctionNameParts parts = split_function_name(name);
  EXPECT_EQ(name.substr(parts.qualified_begin, 12), "leveldb::Has");
  EXPECT_EQ(name.substr(parts.scope_end, 2), "::");
  EXPECT_EQ(name[parts.parameters_begin], '(');
  EXPECT_EQ(split_function_name("f").parameters_begin, std::string_view::npos);
  EXPECT_EQ(split_function_name("f").scope_end, std::string_view::npos);
  // A return type's decltype expression is no parameter list.
  const OperationName begin =
      cpp("decltype (({parm#1}.begin)()) std::begin<std::vector<int, std::allocator<int> > >(std::"
          "vector<int, std::allocator<int> >&)");
  EXPECT_EQ(begin.operation, "std::begin<std::vector<int>>(std::vector<int>&)");
  EXPECT_EQ(begin.component, "std");
  EXPECT_EQ(cpp("decltype(auto) ns::f<int>()").operation, "ns::f<int>()");
  EXPECT_TRUE(is_compiler_clone_name("parse.constprop.0"));
  EXPECT_TRUE(is_compiler_clone_name("f.isra.0.part.1"));
  EXPECT_FALSE(is_compiler_clone_name("shop.recurse"));
  EXPECT_FALSE(is_compiler_clone_name("main"));
}

// The demo's lock site as the Dispensable Synchronization finding showed it.
TEST(OperationName, ReadableTypeNamesShortenTheStandardStrings) {
  EXPECT_EQ(readable_type_names("shop.Shop.cross_bridge(std.__cxx11.basic_string<char| "
                                "std.char_traits<char>| std.allocator<char> > const&)"),
            "shop.Shop.cross_bridge(std.string const&)");
  EXPECT_EQ(readable_type_names("void f(std::__cxx11::basic_string<char, std::char_traits<char>, "
                                "std::allocator<char> >, std::basic_string_view<char, "
                                "std::char_traits<char> >, std::__cxx11::list<int>)"),
            "void f(std::string, std::string_view, std::list<int>)");
  EXPECT_EQ(readable_type_names("std.vector<int| std.allocator<int> >"), "std.vector<int>");
  // Twice in a row, and text that only looks similar stays.
  EXPECT_EQ(readable_type_names("std.__cxx11.list<int> std.__cxx11.list<int>"),
            "std.list<int> std.list<int>");
  EXPECT_EQ(readable_type_names("SELECT a || b FROM std_cxx11"), "SELECT a || b FROM std_cxx11");
}

}  // namespace
}  // namespace sonde::format
