// How a demangled C/C++ function name divides: a return type (the names of
// template instances carry one), the qualified name, and the parameter
// list. Header-only: libsonde (the function filter, culling), `sonde cull
// LOG` (which cannot link libsonde's hidden internals) and the operation
// names every view shows (operation_name.hpp) must divide names alike.
#pragma once

#include <string_view>

namespace sonde::format {

// A character of a C/C++ identifier.
constexpr bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

struct FunctionNameParts {
  size_t qualified_begin = 0;                        // after the return type
  size_t scope_end = std::string_view::npos;         // the last "::" of the qualified name
  size_t parameters_begin = std::string_view::npos;  // its '(' , npos if none
};

// Brackets (<>, (), [], {}) are skipped; so are "(anonymous namespace)",
// an operator's own characters (operator<<, operator(), operator new[],
// conversion operators), which are no brackets, and a return type's
// "decltype (…)" expression, which is no parameter list.
constexpr FunctionNameParts split_function_name(std::string_view name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  constexpr std::string_view kOperator = "operator";
  constexpr std::string_view kDecltype = "decltype";
  FunctionNameParts parts;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (depth == 0 && name.substr(i, kDecltype.size()) == kDecltype &&
        (i == 0 || name[i - 1] == ' ')) {
      size_t j = i + kDecltype.size();
      while (j < name.size() && name[j] == ' ') ++j;
      if (j < name.size() && name[j] == '(') {
        for (int parens = 0; j < name.size(); ++j) {
          if (name[j] == '(') ++parens;
          if (name[j] == ')' && --parens == 0) break;
        }
        i = j;  // the space after it ends the return type
        continue;
      }
    }
    if (name.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;
      continue;
    }
    if (name.substr(i, kOperator.size()) == kOperator &&
        (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ')) {
      i += kOperator.size();
      if (name.substr(i, 2) == "()") ++i;
      while (i + 1 < name.size() && name[i + 1] != '(') ++i;
      continue;
    }
    const char c = name[i];
    if (c == '<' || c == '[' || c == '{') {
      ++depth;
    } else if (c == '>' || c == ']' || c == '}') {
      --depth;
    } else if (c == '(') {
      if (depth == 0) {
        parts.parameters_begin = i;
        break;
      }
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == ' ' && depth == 0) {
      parts.qualified_begin = i + 1;  // what came before was the return type
      parts.scope_end = std::string_view::npos;
    } else if (c == ':' && depth == 0 && i + 1 < name.size() && name[i + 1] == ':') {
      parts.scope_end = i;
      ++i;
    }
  }
  return parts;
}

// A C function's compiler clone: "parse.constprop.0", "emit.cold",
// "f.isra.0.part.1", "g.lto_priv.0": a name, then only clone suffixes
// (these words and numbers). Its dots separate no scope.
constexpr bool is_compiler_clone_name(std::string_view name) {
  size_t dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  while (dot != std::string_view::npos) {
    const size_t next = name.find('.', dot + 1);
    const std::string_view part = name.substr(
        dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1);
    bool digits = !part.empty();
    for (char c : part) digits = digits && c >= '0' && c <= '9';
    if (!digits && part != "constprop" && part != "isra" && part != "part" && part != "cold" &&
        part != "hot" && part != "lto_priv" && part != "localalias" && part != "clone")
      return false;
    dot = next;
  }
  return true;
}

// A demangled function name without the return type that the names of
// template instances carry: "(anonymous namespace)::Db* std::__get_helper<0ul,
// Db*>(std::tuple<Db*>&)" -> "std::__get_helper<0ul, Db*>(std::tuple<Db*>&)".
// Patterns match functions by this, so that "+(anonymous namespace)::*"
// does not pin a standard-library template that merely returns such a type
// (124,016 calls of one in a user's run). Names without a return type come
// back unchanged.
constexpr std::string_view without_return_type(std::string_view name) {
  return name.substr(split_function_name(name).qualified_begin);
}

}  // namespace sonde::format
