#include "analysis/export/openxtrace_method_names.hpp"

#include "analysis/model/operation_signature.hpp"
#include "analysis/text/text_trim.hpp"

namespace sonde::analysis {
namespace {

// Splits at commas outside <>, () and [] (template and function types).
std::vector<std::string> split_parameters(std::string_view params) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= params.size(); ++i) {
    const char c = i < params.size() ? params[i] : ',';
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      const std::string_view p = trim_space(params.substr(start, i - start));
      if (!p.empty()) out.emplace_back(p);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

MethodNames method_names(std::string_view operation, std::string_view component) {
  MethodNames names;
  const SignatureParts parts = split_operation_signature(operation);
  names.method_name = std::string(parts.name);
  names.has_parameter_list = parts.has_parentheses;
  if (parts.has_parentheses) names.parameter_types = split_parameters(parts.parameters);
  const size_t space = parts.prefix.rfind(' ');
  names.return_type =
      std::string(space == std::string_view::npos ? parts.prefix : parts.prefix.substr(space + 1));
  // Package and class from the component, the execution's class as
  // recorded, so that a reader joining them gets the component back.
  const std::string_view cls = short_class_label(component);
  names.class_name = std::string(cls);
  if (cls.size() < component.size()) {
    std::string_view package = component.substr(0, component.size() - cls.size());
    while (!package.empty() && (package.back() == '.' || package.back() == ':')) {
      package.remove_suffix(1);
    }
    names.package_name = std::string(package);
  }
  return names;
}

}  // namespace sonde::analysis
