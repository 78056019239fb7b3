#include "format/operation_name.hpp"

#include <utility>

#include "format/default_template_arguments.hpp"
#include "format/function_name.hpp"
#include "format/kieker_signature.hpp"

namespace sonde::format {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!is_identifier_char(c) && c != '$') return false;
  return true;
}

// A manual probe named the Java way ("shop.Catalog.getBook") declares its
// component; a compiler's clone of a C function ("parse.constprop.0",
// "emit.cold") does not.
size_t dotted_scope_end(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || is_compiler_clone_name(name))
    return std::string_view::npos;
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

// "a<b<c<int> > >" -> "a<b<c<int>>>": the matches overlap, so each is
// looked for again from where the last one was.
void close_angle_brackets(std::string& s) {
  for (size_t at = s.find("> >"); at != std::string::npos; at = s.find("> >", at))
    s.erase(at + 1, 1);
}

// SONDE_SCOPE() names its probe by __PRETTY_FUNCTION__ ("void
// shop::Shop::checkout(int)"): a function's signature, read as functions'
// names are. Any other manual name is the program's own words.
bool is_function_signature(std::string_view name) {
  const FunctionNameParts parts = split_function_name(name);
  if (parts.parameters_begin == std::string_view::npos || name.back() == ' ') return false;
  const std::string_view qualified =
      name.substr(parts.qualified_begin, parts.parameters_begin - parts.qualified_begin);
  if (qualified.empty()) return false;
  for (char c : qualified)
    if (!is_identifier_char(c) && std::string_view(":<>~, *&()").find(c) == std::string_view::npos)
      return false;
  return true;
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
      {"std::basic_string_view<char, std::char_traits<char> >", "std::string_view"},
      {"std.basic_string_view<char| std.char_traits<char> >", "std.string_view"},
      {"std::__cxx11::", "std::"},
      {"std.__cxx11.", "std."},
  };
  std::string out(text);
  for (const auto& [from, to] : kNames) replace_all(out, from, to);
  if (out.find('<') == std::string::npos) return out;
  // The old ABI's std::basic_string<char> is another type than
  // std::__cxx11's std::string: it keeps its name.
  drop_default_template_arguments(out);
  replace_all(out, "std::basic_string_view<char>", "std::string_view");
  replace_all(out, "std.basic_string_view<char>", "std.string_view");
  close_angle_brackets(out);
  return out;
}

OperationName operation_name(std::string_view name, std::string_view module, NameForm form,
                             native::OperationKind kind) {
  if (form == NameForm::kKieker) {
    KiekerSignature sig = kieker_signature(name, module);
    return {std::move(sig.operation), std::move(sig.component)};
  }
  OperationName out;
  if (kind == native::OperationKind::kManual && !is_function_signature(name)) {
    // The program's own words ("GET /items", "shop.Catalog.getBook"): no
    // return type to drop, no library types to shorten.
    out.operation = name;
    const std::string_view op = out.operation;
    const size_t dot = dotted_scope_end(op.substr(0, op.find('(')));
    out.component =
        dot != std::string_view::npos ? std::string(op.substr(0, dot)) : module_base_name(module);
    return out;
  }
  out.operation = readable_type_names(without_return_type(name));
  const std::string_view op = out.operation;
  const FunctionNameParts parts = split_function_name(op);
  if (parts.scope_end != std::string_view::npos) {
    out.component = op.substr(0, parts.scope_end);
  } else if (const size_t dot = dotted_scope_end(op.substr(0, parts.parameters_begin));
             dot != std::string_view::npos) {
    out.component = op.substr(0, dot);
  } else {
    out.component = module_base_name(module);
  }
  return out;
}

}  // namespace sonde::format
