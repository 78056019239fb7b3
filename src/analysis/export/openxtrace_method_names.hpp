// The parts of a MethodInvocation that OPEN.xtrace keeps apart (package,
// class, method, parameter types, return type), split from a sonde
// execution's operation signature and component. The full signature is
// written as well, so nothing depends on the split being right.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sonde::analysis {

struct MethodNames {
  std::string package_name;  // "a.b" of component "a.b.Cart"; empty if none
  std::string class_name;    // "Cart"; empty if the component is empty
  std::string method_name;   // "add"
  std::string return_type;   // last word of the signature's prefix ("void"); may be empty
  std::vector<std::string> parameter_types;  // top-level, comma-separated, trimmed
  bool has_parameter_list = false;           // false: parameterTypes is written as null
};

MethodNames method_names(std::string_view operation, std::string_view component);

}  // namespace sonde::analysis
