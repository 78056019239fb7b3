// Splits operation signatures into their parts. Java signatures as Kieker
// records them ("public static void a.b.Class.name(java.lang.String[])"),
// bare ones ("a.b.Class.name(boolean)") and C++ ones
// ("int ns::Tpl<int, char>::name(int) const") all work: the qualified name is
// split at the last "." or "::" outside template brackets and parentheses.
#pragma once

#include <string>
#include <string_view>

#include "format/operation_name.hpp"

namespace sonde::analysis {

struct SignatureParts {
  std::string_view prefix;  // modifiers and return type ("public static void"), may be empty
  std::string_view qualified_class;  // "a.b.Class" or "ns::Tpl<int, char>", empty if none
  std::string_view name;             // operation name ("getBook")
  std::string_view parameters;       // between the parentheses, empty if none
  bool has_parentheses = false;
};

// Views into `signature`. Never fails: what cannot be parsed ends up in `name`.
SignatureParts split_operation_signature(std::string_view signature);

// Class part of a signature; `fallback` when there is none.
std::string_view class_of_signature(std::string_view signature, std::string_view fallback = {});

// Short labels, as Kieker's --short-labels: "getBook(..)" / "getBook()" and
// the last segment of a qualified class name ("Catalog").
std::string short_operation_label(std::string_view signature);
std::string_view short_class_label(std::string_view qualified_class);

// One line naming an execution's operation, as its name's language writes
// it. Kieker's and Java's form ("bookstore.Catalog.getBook(boolean)" in
// component "bookstore.Catalog"): "Catalog.getBook(..)" short, the
// signature in full. A C++ name ("shapes::Circle::area() const"): short
// "Circle::area()" (operators too: "unique_ptr<Foo>::operator bool()"),
// else the name; a free C++ function, whose component is its module, a
// manual probe's own words and a compiler clone: the name alone
// ("count_down(..)", "GET /items", "parse.constprop.0"), as the module is
// shown apart (docs/formats/operation-names.md).
std::string operation_display_label(std::string_view component, std::string_view operation,
                                    bool short_labels);
// Whether the operation is written in Kieker's form for its component
// ("a.B.op(..)" in "a.B"): then diagrams show the component on a line of
// its own and the operation after a '.'.
bool is_dotted_member_of(std::string_view component, std::string_view operation);

// For reports people read (format/operation_name.hpp).
using format::readable_type_names;

}  // namespace sonde::analysis
