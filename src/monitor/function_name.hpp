// The name patterns match a function by. Header-only: libsonde (the
// function filter, culling) and `sonde cull LOG` (which cannot link
// libsonde's hidden internals) must name functions alike.
#pragma once

#include <string_view>

namespace sonde::monitor {

// A demangled function name without the return type that the names of
// template instances carry: "(anonymous namespace)::Db* std::__get_helper<0ul,
// Db*>(std::tuple<Db*>&)" -> "std::__get_helper<0ul, Db*>(std::tuple<Db*>&)".
// Patterns match functions by this, so that "+(anonymous namespace)::*"
// does not pin a standard-library template that merely returns such a type
// (124,016 calls of one in a user's run). Names without a return type come
// back unchanged.
inline std::string_view without_return_type(std::string_view name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  constexpr std::string_view kOperator = "operator";
  int depth = 0;  // inside <>, (), [] or {}
  size_t start = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;
      continue;
    }
    if (name.substr(i, kOperator.size()) == kOperator &&
        (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ')) {
      // operator<<, operator(), operator new[], operator bool: the
      // operator's own characters are no brackets; its parameters follow.
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
      if (depth == 0) break;  // the parameter list
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == ' ' && depth == 0) {
      start = i + 1;  // what came before was the return type
    }
  }
  return name.substr(start);
}

}  // namespace sonde::monitor
