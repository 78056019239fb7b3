#include "format/default_template_arguments.hpp"

#include <string_view>
#include <vector>

#include "format/function_name.hpp"

namespace sonde::format {
namespace {

// Without spaces, so that "std::allocator<int> >" and the rebuilt
// "std::allocator<int>" compare equal.
std::string without_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out.push_back(c);
  return out;
}

// The template an argument list at `open` ('<') belongs to: the qualified
// identifier right before it ("std::vector", "std.map").
std::string_view owner_of(std::string_view s, size_t open) {
  size_t begin = open;
  while (begin > 0 &&
         (is_identifier_char(s[begin - 1]) || s[begin - 1] == ':' || s[begin - 1] == '.'))
    --begin;
  return s.substr(begin, open - begin);
}

// What the template would have chosen for argument `index`, from the ones
// before it; "" when the argument has no default (or is not one we know).
std::string default_argument(std::string_view owner, const std::vector<std::string_view>& args,
                             size_t index) {
  const bool kieker = owner.substr(0, 4) == "std.";
  if (!kieker && owner.substr(0, 5) != "std::") return "";
  const std::string p = kieker ? "std." : "std::";
  const std::string_view name = owner.substr(p.size());
  const std::string_view a0 = args[0];
  auto of = [&](std::string_view tpl, std::string_view arg) {
    return p + std::string(tpl) + "<" + std::string(arg) + ">";
  };
  auto pair = [&] {
    return p + "pair<" + std::string(a0) + " const" + (kieker ? "| " : ", ") +
           std::string(args[1]) + ">";
  };
  if (name == "vector" || name == "list" || name == "deque" || name == "forward_list")
    return index == 1 ? of("allocator", a0) : "";
  if (name == "unique_ptr") return index == 1 ? of("default_delete", a0) : "";
  if (name == "basic_string") {
    if (index == 1) return of("char_traits", a0);
    return index == 2 ? of("allocator", a0) : "";
  }
  if (name == "basic_string_view") return index == 1 ? of("char_traits", a0) : "";
  if (name == "set" || name == "multiset") {
    if (index == 1) return of("less", a0);
    return index == 2 ? of("allocator", a0) : "";
  }
  if (name == "unordered_set" || name == "unordered_multiset") {
    if (index == 1) return of("hash", a0);
    if (index == 2) return of("equal_to", a0);
    return index == 3 ? of("allocator", a0) : "";
  }
  if (args.size() < 2) return "";
  if (name == "map" || name == "multimap") {
    if (index == 2) return of("less", a0);
    return index == 3 ? of("allocator", pair()) : "";
  }
  if (name == "unordered_map" || name == "unordered_multimap") {
    if (index == 2) return of("hash", a0);
    if (index == 3) return of("equal_to", a0);
    return index == 4 ? of("allocator", pair()) : "";
  }
  return "";
}

// The arguments between `open` ('<') and `close` ('>'), split at ',' or '|'
// outside brackets; false if the list is not one (unbalanced inside).
bool split_arguments(std::string_view s, size_t open, size_t close,
                     std::vector<std::string_view>& args, std::vector<size_t>& separators) {
  args.clear();
  separators.clear();
  int depth = 0;
  size_t begin = open + 1;
  for (size_t i = open + 1; i < close; ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (depth < 0) return false;
    if (depth == 0 && (c == ',' || c == '|')) {
      args.push_back(s.substr(begin, i - begin));
      separators.push_back(i);
      begin = i + 1;
    }
  }
  args.push_back(s.substr(begin, close - begin));
  for (std::string_view& a : args) {
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  }
  return depth == 0;
}

// One trailing default argument dropped somewhere in `s`; false if none.
bool drop_one(std::string& s) {
  std::vector<size_t> open;  // positions of '<' and '(' we are inside
  std::vector<std::string_view> args;
  std::vector<size_t> separators;
  for (size_t i = 0; i < s.size(); ++i) {
    // An operator's own characters are no brackets: "operator<", "operator()".
    if (s.compare(i, 8, "operator") == 0 && (i == 0 || !is_identifier_char(s[i - 1])) &&
        (i + 8 >= s.size() || !is_identifier_char(s[i + 8]))) {
      size_t j = i + 8;
      if (s.compare(j, 2, "()") == 0) j += 2;
      while (j < s.size() &&
             std::string_view("<>=!+-*/%^&|~[],").find(s[j]) != std::string_view::npos)
        ++j;
      i = j - 1;
      continue;
    }
    const char c = s[i];
    if (c == '<' || c == '(') {
      open.push_back(i);
    } else if (c == ')') {
      if (!open.empty() && s[open.back()] == '(') open.pop_back();
    } else if (c == '>') {
      if (open.empty() || s[open.back()] != '<') continue;
      const size_t at = open.back();
      open.pop_back();
      const std::string_view view(s);
      if (!split_arguments(view, at, i, args, separators) || args.size() < 2) continue;
      const std::string expected = default_argument(owner_of(view, at), args, args.size() - 1);
      if (expected.empty() || without_spaces(args.back()) != without_spaces(expected)) continue;
      // ", std::allocator<int> >" -> ">": the separator, the argument and
      // the space before the closing bracket.
      s.erase(separators.back(), i - separators.back());
      return true;
    }
  }
  return false;
}

}  // namespace

bool drop_default_template_arguments(std::string& text) {
  bool any = false;
  while (drop_one(text)) any = true;
  return any;
}

}  // namespace sonde::format
