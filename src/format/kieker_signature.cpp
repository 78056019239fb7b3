#include "format/kieker_signature.hpp"

#include "format/function_name.hpp"
#include "format/operation_name.hpp"

namespace sonde::format {
namespace {

// "::" to "." outside parentheses; inside template arguments ',' to '|'
// and ';' anywhere to ':'.
std::string dotted(std::string_view s) {
  std::string out;
  int angle = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      out.push_back('.');
      ++i;
      continue;
    }
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == ',' && angle > 0) c = '|';
    if (c == ';' || c == '\n' || c == '\r') c = ':';
    out.push_back(c);
  }
  return out;
}

}  // namespace

KiekerSignature kieker_signature(std::string_view name, std::string_view module) {
  // "void ns::f(params) const": the return type (from __PRETTY_FUNCTION__
  // or a template instance's name), the qualified name, the parameters.
  const FunctionNameParts parts = split_function_name(name);
  const size_t open = parts.parameters_begin;
  const std::string_view return_and_mods = name.substr(0, parts.qualified_begin);
  std::string_view qualified =
      open == std::string_view::npos
          ? name.substr(parts.qualified_begin)
          : name.substr(parts.qualified_begin, open - parts.qualified_begin);
  const std::string_view params = open == std::string_view::npos ? "()" : name.substr(open);
  const size_t last = parts.scope_end == std::string_view::npos
                          ? std::string_view::npos
                          : parts.scope_end - parts.qualified_begin;
  KiekerSignature sig;
  std::string op_name;
  size_t dot = qualified.rfind('.');
  if (last == std::string_view::npos && dot != std::string_view::npos && dot > 0) {
    // Already dotted (a manual probe named "shop.Catalog.getBook"): keep it.
    sig.component = dotted(qualified.substr(0, dot));
    op_name = dotted(qualified.substr(dot + 1));
  } else if (last == std::string_view::npos) {
    sig.component = module_base_name(module);
    op_name = dotted(qualified);
  } else {
    sig.component = dotted(qualified.substr(0, last));
    op_name = dotted(qualified.substr(last + 2));
  }
  sig.operation = dotted(return_and_mods) + sig.component + "." + op_name + dotted(params);
  return sig;
}

}  // namespace sonde::format
