#include "format/kieker_signature.hpp"

namespace sonde::format {
namespace {

std::string module_base_name(std::string_view module) {
  size_t slash = module.rfind('/');
  if (slash != std::string_view::npos) module.remove_prefix(slash + 1);
  if (module.substr(0, 3) == "lib") module.remove_prefix(3);
  size_t dot = module.find(".so");
  if (dot != std::string_view::npos) module = module.substr(0, dot);
  std::string out;
  for (char c : module) out.push_back(c == '.' || c == '-' ? '_' : c);
  return out.empty() ? "program" : out;
}

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
  // Split "qualified::name(params) const" at the parameter list, skipping
  // parentheses inside template arguments such as "f<void (*)(int)>(…)".
  size_t open = std::string_view::npos;
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++angle;
    if (name[i] == '>' && angle > 0) --angle;
    if (name[i] == '(' && angle == 0) {
      open = i;
      break;
    }
  }
  std::string_view qualified = open == std::string_view::npos ? name : name.substr(0, open);
  std::string_view params = open == std::string_view::npos ? "()" : name.substr(open);
  // Drop a leading return type ("void ns::f" from __PRETTY_FUNCTION__).
  angle = 0;
  size_t space = std::string_view::npos;
  for (size_t i = 0; i < qualified.size(); ++i) {
    if (qualified[i] == '<') ++angle;
    if (qualified[i] == '>' && angle > 0) --angle;
    if (qualified[i] == ' ' && angle == 0) space = i;
  }
  std::string_view return_and_mods;
  if (space != std::string_view::npos) {
    return_and_mods = qualified.substr(0, space + 1);
    qualified = qualified.substr(space + 1);
  }
  // The component is everything before the last "::" outside templates.
  size_t last = std::string_view::npos;
  angle = 0;
  for (size_t i = 0; i + 1 < qualified.size(); ++i) {
    if (qualified[i] == '<') ++angle;
    if (qualified[i] == '>' && angle > 0) --angle;
    if (angle == 0 && qualified[i] == ':' && qualified[i + 1] == ':') last = i;
  }
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
