#include "analysis/model/operation_signature.hpp"

#include "analysis/text/text_trim.hpp"
#include "format/function_name.hpp"

namespace sonde::analysis {
namespace {

// Bracket depth bookkeeping shared by the scanners: '<' '(' open, '>' ')'
// close. Clamped at 0 so that "operator<" cannot make the rest unreadable.
void step_depth(char c, int& depth, bool forward) {
  const bool opens = forward ? (c == '<' || c == '(') : (c == '>' || c == ')');
  const bool closes = forward ? (c == '>' || c == ')') : (c == '<' || c == '(');
  if (opens) ++depth;
  if (closes && depth > 0) --depth;
}

// Splits "a.b.C.name" or "ns::C<T>::name" at the last separator outside brackets.
void split_qualified(std::string_view q, std::string_view& owner, std::string_view& name) {
  size_t sep = std::string_view::npos;
  size_t sep_len = 0;
  int depth = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    const char c = q[i];
    if (depth == 0) {
      if (c == '.') {
        sep = i;
        sep_len = 1;
      } else if (c == ':' && i + 1 < q.size() && q[i + 1] == ':') {
        sep = i;
        sep_len = 2;
        ++i;
        continue;
      }
    }
    step_depth(c, depth, true);
  }
  if (sep == std::string_view::npos) {
    owner = {};
    name = q;
  } else {
    owner = q.substr(0, sep);
    name = q.substr(sep + sep_len);
  }
}

}  // namespace

SignatureParts split_operation_signature(std::string_view signature) {
  SignatureParts parts;
  const std::string_view sig = trim_space(signature);
  // The parameter list ends at the last ')'; walk back to its matching '('.
  size_t head_end = sig.size();
  const size_t close = sig.rfind(')');
  if (close != std::string_view::npos) {
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (sig[i] == ')') ++depth;
      if (sig[i] == '(' && --depth == 0) {
        head_end = i;
        parts.has_parentheses = true;
        parts.parameters = trim_space(sig.substr(i + 1, close - i - 1));
        break;
      }
    }
  }
  const std::string_view head = trim_space(sig.substr(0, head_end));
  // The qualified name is the last whitespace-separated token outside brackets.
  size_t name_begin = 0;
  int depth = 0;
  for (size_t i = head.size(); i-- > 0;) {
    const char c = head[i];
    if (depth == 0 && is_ascii_space(c)) {
      name_begin = i + 1;
      break;
    }
    step_depth(c, depth, false);
  }
  parts.prefix = trim_space(head.substr(0, name_begin));
  split_qualified(head.substr(name_begin), parts.qualified_class, parts.name);
  return parts;
}

std::string_view class_of_signature(std::string_view signature, std::string_view fallback) {
  const SignatureParts parts = split_operation_signature(signature);
  return parts.qualified_class.empty() ? fallback : parts.qualified_class;
}

std::string short_operation_label(std::string_view signature) {
  const SignatureParts parts = split_operation_signature(signature);
  std::string label(parts.name);
  if (parts.has_parentheses) label += parts.parameters.empty() ? "()" : "(..)";
  return label;
}

std::string_view short_class_label(std::string_view qualified_class) {
  std::string_view owner;
  std::string_view name;
  split_qualified(trim_space(qualified_class), owner, name);
  return name;
}

bool is_dotted_member_of(std::string_view component, std::string_view operation) {
  if (component.empty() || operation.find("::") != std::string_view::npos) return false;
  return split_operation_signature(operation).qualified_class == component;
}

namespace {

// "shapes::Circle::area() const" -> "Circle::area()", read as C++ names
// divide (format/function_name.hpp: operators, anonymous namespaces,
// decltype); a free function keeps its name alone.
std::string cpp_short_label(std::string_view operation) {
  constexpr size_t npos = std::string_view::npos;
  const format::FunctionNameParts parts = format::split_function_name(operation);
  // No parameters and no scope: a manual probe's own words ("GET /items").
  if (parts.parameters_begin == npos && operation.find("::") == npos) return std::string(operation);
  const size_t end = parts.parameters_begin == npos ? operation.size() : parts.parameters_begin;
  const size_t name_begin = parts.scope_end == npos ? parts.qualified_begin : parts.scope_end + 2;
  std::string label;
  if (parts.scope_end != npos) {
    std::string_view scope =
        operation.substr(parts.qualified_begin, parts.scope_end - parts.qualified_begin);
    const size_t outer = format::split_function_name(scope).scope_end;
    if (outer != npos) scope.remove_prefix(outer + 2);
    label.append(scope);
    label += "::";
  }
  label.append(operation.substr(name_begin, end - name_begin));
  if (parts.parameters_begin != npos)
    label += operation.substr(parts.parameters_begin, 2) == "()" ? "()" : "(..)";
  return label;
}

}  // namespace

std::string operation_display_label(std::string_view component, std::string_view operation,
                                    bool short_labels) {
  if (!short_labels) return std::string(operation);
  const bool java_form =
      operation.find("::") == std::string_view::npos &&
      !format::is_compiler_clone_name(operation) &&
      split_operation_signature(operation).qualified_class.find('.') != std::string_view::npos;
  const bool kieker_member = is_dotted_member_of(component, operation);
  if (!java_form && !kieker_member) return cpp_short_label(operation);
  // Kieker's and Java's form: the component's last segment, '.', the name.
  const SignatureParts parts = split_operation_signature(operation);
  std::string label;
  const std::string_view owner = component.empty() ? parts.qualified_class : component;
  if (!owner.empty()) {
    label.append(short_class_label(owner));
    label += '.';
  }
  label += short_operation_label(operation);
  return label;
}

}  // namespace sonde::analysis
