// Signature splitting for Java (as Kieker records it) and C++ names.
#include "analysis/model/operation_signature.hpp"

#include <gtest/gtest.h>

namespace sonde::analysis {
namespace {

TEST(OperationSignature, JavaWithModifiers) {
  const SignatureParts p = split_operation_signature(
      "public static void kieker.examples.BookstoreStarter.main(java.lang.String[])");
  EXPECT_EQ(p.prefix, "public static void");
  EXPECT_EQ(p.qualified_class, "kieker.examples.BookstoreStarter");
  EXPECT_EQ(p.name, "main");
  EXPECT_EQ(p.parameters, "java.lang.String[]");
  EXPECT_TRUE(p.has_parentheses);
}

TEST(OperationSignature, BareJavaAndInnerClass) {
  SignatureParts p = split_operation_signature("bookstoreTracing.Catalog.getBook(boolean)");
  EXPECT_EQ(p.prefix, "");
  EXPECT_EQ(p.qualified_class, "bookstoreTracing.Catalog");
  EXPECT_EQ(p.name, "getBook");
  p = split_operation_signature("public void a.Starter$1.run()");
  EXPECT_EQ(p.qualified_class, "a.Starter$1");
  EXPECT_EQ(p.parameters, "");
}

TEST(OperationSignature, CppTemplatesAndQualifiers) {
  const SignatureParts p = split_operation_signature(
      "std::vector<int> ns::Cache<std::string, int>::lookup(const std::pair<int, int>&) const");
  EXPECT_EQ(p.prefix, "std::vector<int>");
  EXPECT_EQ(p.qualified_class, "ns::Cache<std::string, int>");
  EXPECT_EQ(p.name, "lookup");
  EXPECT_EQ(p.parameters, "const std::pair<int, int>&");
}

TEST(OperationSignature, FreeFunctionsAndNamesWithoutParentheses) {
  SignatureParts p = split_operation_signature("int main(int, char**)");
  EXPECT_EQ(p.qualified_class, "");
  EXPECT_EQ(p.name, "main");
  p = split_operation_signature("compute");
  EXPECT_EQ(p.name, "compute");
  EXPECT_FALSE(p.has_parentheses);
  EXPECT_EQ(class_of_signature("compute", "fallback"), "fallback");
}

TEST(OperationSignature, ShortLabelsAsKieker) {
  EXPECT_EQ(short_operation_label("bookstoreTracing.Catalog.getBook(boolean)"), "getBook(..)");
  EXPECT_EQ(short_operation_label("public void a.B.searchBook()"), "searchBook()");
  EXPECT_EQ(short_operation_label("compute"), "compute");
  EXPECT_EQ(short_class_label("bookstoreTracing.Catalog"), "Catalog");
  EXPECT_EQ(short_class_label("ns::Cache<a::B, int>"), "Cache<a::B, int>");
}

// Labels as each name's language writes it (flame graphs, call trees,
// trace exports, the served graph).
TEST(OperationSignature, DisplayLabelsFollowTheNamesLanguage) {
  auto label = [](std::string_view component, std::string_view op) {
    return operation_display_label(component, op, true);
  };
  EXPECT_EQ(label("shapes::Circle", "shapes::Circle::area() const"), "Circle::area()");
  EXPECT_EQ(label("shapes", "shapes::make(int, double)"), "shapes::make(..)");
  EXPECT_EQ(label("app", "count_down(int)"), "count_down(..)");
  EXPECT_EQ(label("app", "main"), "main");
  EXPECT_EQ(label("(anonymous namespace)", "(anonymous namespace)::report(int)"),
            "(anonymous namespace)::report(..)");
  // Operators and conversions are names, not parameter lists or types.
  EXPECT_EQ(label("std::unique_ptr<Foo>", "std::unique_ptr<Foo>::operator bool() const"),
            "unique_ptr<Foo>::operator bool()");
  EXPECT_EQ(label("Foo", "Foo::operator()(int)"), "Foo::operator()(..)");
  EXPECT_EQ(label("std", "std::operator< <int, int>(std::pair<int, int> const&)"),
            "std::operator< <int, int>(..)");
  // A manual probe's own words and a C function's clone stay whole.
  EXPECT_EQ(label("shop", "GET /items"), "GET /items");
  EXPECT_EQ(label("app", "parse.constprop.0"), "parse.constprop.0");
  // Kieker's and Java's form: the component's last segment and the name.
  EXPECT_EQ(label("bookstore.Catalog", "bookstore.Catalog.getBook(boolean)"),
            "Catalog.getBook(..)");
  EXPECT_EQ(label("C", "C.a()"), "C.a()");
  EXPECT_EQ(label("a.Derived", "a.Base.run()"), "Derived.run()");
  EXPECT_EQ(label("shop", "shop.recurse"), "shop.recurse");
  EXPECT_EQ(operation_display_label("x", "shapes::Circle::area() const", false),
            "shapes::Circle::area() const");
}

}  // namespace
}  // namespace sonde::analysis
