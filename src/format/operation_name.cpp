#include "format/operation_name.hpp"

#include <array>
#include <utility>
#include <vector>

#include "format/function_name.hpp"
#include "format/kieker_signature.hpp"

namespace sonde::format {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$';
    if (!ok) return false;
  }
  return true;
}

// A manual probe named the Java way ("shop.Catalog.getBook") declares its
// component; a compiler's clone of a C function ("parse.constprop.0",
// "emit.cold") does not.
size_t dotted_scope_end(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return std::string_view::npos;
  const std::string_view last = name.substr(dot + 1);
  if (last == "cold" || last == "hot" || last == "part") return std::string_view::npos;
  for (size_t begin = 0; begin <= name.size();) {
    size_t end = name.find('.', begin);
    if (end == std::string_view::npos) end = name.size();
    if (!is_identifier(name.substr(begin, end - begin))) return std::string_view::npos;
    begin = end + 1;
  }
  return dot;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

bool starts_default_argument(std::string_view rest) {
  static constexpr std::array<std::string_view, 6> kDefaults = {
      "allocator<", "default_delete<", "char_traits<", "less<", "hash<", "equal_to<"};
  for (std::string_view prefix : {std::string_view("std::"), std::string_view("std.")}) {
    if (rest.substr(0, prefix.size()) != prefix) continue;
    for (std::string_view d : kDefaults)
      if (rest.substr(prefix.size(), d.size()) == d) return true;
  }
  return false;
}

// Removes one ", std::allocator<…>"-like argument of a template argument
// list; false when there is none left.
bool drop_one_default_argument(std::string& s) {
  std::vector<char> open;  // the brackets we are inside
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') {
      open.push_back(c);
    } else if ((c == '>' || c == ')') && !open.empty()) {
      open.pop_back();
    } else if ((c == ',' || c == '|') && !open.empty() && open.back() == '<' && i + 1 < s.size() &&
               s[i + 1] == ' ' && starts_default_argument(std::string_view(s).substr(i + 2))) {
      // The argument ends where its own brackets close, before ',' '|' or '>'.
      size_t j = i + 2;
      int depth = 0;
      for (; j < s.size(); ++j) {
        if (s[j] == '<' || s[j] == '(') ++depth;
        if (s[j] == '>' || s[j] == ')') {
          if (depth == 0) break;
          --depth;
        }
        if ((s[j] == ',' || s[j] == '|') && depth == 0) break;
      }
      if (j == s.size()) return false;  // unbalanced: leave it as it is
      s.erase(i, j - i);                // with the space before a closing '>': "Shape >" would stay
      return true;
    }
  }
  return false;
}

}  // namespace

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

std::string readable_type_names(std::string_view text) {
  // Longest first: the string types contain the bare "std::__cxx11::".
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
       "std::string"},
      {"std.__cxx11.basic_string<char| std.char_traits<char>| std.allocator<char> >", "std.string"},
      {"std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string"},
      {"std.basic_string<char| std.char_traits<char>| std.allocator<char> >", "std.string"},
      {"std::basic_string_view<char, std::char_traits<char> >", "std::string_view"},
      {"std.basic_string_view<char| std.char_traits<char> >", "std.string_view"},
      {"std::__cxx11::", "std::"},
      {"std.__cxx11.", "std."},
  };
  std::string out(text);
  for (const auto& [from, to] : kNames) replace_all(out, from, to);
  if (out.find('<') == std::string::npos) return out;
  while (drop_one_default_argument(out)) {
  }
  replace_all(out, "std::basic_string<char>", "std::string");
  replace_all(out, "std.basic_string<char>", "std.string");
  replace_all(out, "std::basic_string_view<char>", "std::string_view");
  replace_all(out, "std.basic_string_view<char>", "std.string_view");
  replace_all(out, "> >", ">>");
  return out;
}

OperationName operation_name(std::string_view name, std::string_view module, NameForm form) {
  if (form == NameForm::kKieker) {
    KiekerSignature sig = kieker_signature(name, module);
    return {std::move(sig.operation), std::move(sig.component)};
  }
  OperationName out;
  out.operation = readable_type_names(without_return_type(name));
  const std::string_view op = out.operation;
  const FunctionNameParts parts = split_function_name(op);
  if (parts.scope_end != std::string_view::npos) {
    out.component = op.substr(0, parts.scope_end);
  } else if (const size_t dot = parts.parameters_begin == std::string_view::npos
                                    ? dotted_scope_end(op)
                                    : std::string_view::npos;
             dot != std::string_view::npos) {
    out.component = op.substr(0, dot);
  } else {
    out.component = module_base_name(module);
  }
  return out;
}

}  // namespace sonde::format
