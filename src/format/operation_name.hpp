// The one function that names an operation of a native log (a demangled
// C/C++ function or a manual probe's name, and the module it lives in).
// sonde's own views name operations as C++ users write them; Kieker's
// files name them as Kieker's Java tools parse them.
#pragma once

#include <string>
#include <string_view>

#include "format/native_format.hpp"

namespace sonde::format {

enum class NameForm {
  // "shapes::make(int, double)", "std::vector<std::unique_ptr<shapes::Shape>>::size() const";
  // the component is the scope ("shapes"), or the module for a free function.
  kCpp,
  // "shapes.make(int, double)", Kieker's signature (kieker_signature.hpp).
  kKieker,
};

struct OperationName {
  std::string operation;
  std::string component;
};

// A manual probe's name (kind kManual) is kept as the program gave it
// ("GET /items"); a function's is read as C++ names are (below).
OperationName operation_name(std::string_view name, std::string_view module, NameForm form,
                             native::OperationKind kind = native::OperationKind::kFunction);

// The module as a component name: "/usr/lib/libfoo-2.so.1" -> "foo_2".
std::string module_base_name(std::string_view module);

// What the code says instead of the standard library's spelled-out types,
// in C++ form ("std::", ",") and in Kieker's ("std.", "|"): the string
// types become std::string and std::string_view, std::__cxx11:: becomes
// std::, default template arguments (std::allocator, std::default_delete,
// std::char_traits, std::less, std::hash, std::equal_to after the first
// argument) are dropped and "> >" closes as ">>". The rest is unchanged.
std::string readable_type_names(std::string_view text);

}  // namespace sonde::format
