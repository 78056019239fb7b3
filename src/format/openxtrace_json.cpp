#include "format/openxtrace_json.hpp"

#include <cmath>

namespace sonde::format::openxtrace {
namespace {

// "org.spec...callables.MethodInvocation", "...inspectit.impl.IITRemoteInvocation"
// and "MethodInvocationImpl" all name a MethodInvocation.
std::string_view simple_class_name(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot != std::string_view::npos) name.remove_prefix(dot + 1);
  if (name.starts_with("IIT")) name.remove_prefix(3);
  if (name.ends_with("Impl")) name.remove_suffix(4);
  return name;
}

}  // namespace

CallableKind classify_callable(const Json& callable) {
  if (!callable.is_object()) return CallableKind::kUnknown;
  const Json* cls = member(callable, "@class");
  if (cls != nullptr && cls->is_string()) {
    const std::string_view name = simple_class_name(cls->get_ref<const std::string&>());
    if (name == "MethodInvocation") return CallableKind::kMethod;
    if (name == "HTTPRequestProcessing" || name == "HttpRequestProcessing") {
      return CallableKind::kHttp;
    }
    if (name == "UseCaseInvocation") return CallableKind::kUseCase;
    if (name == "DatabaseInvocation") return CallableKind::kDatabase;
    if (name == "RemoteInvocation") return CallableKind::kRemote;
    if (name == "LoggingInvocation") return CallableKind::kLogging;
    if (name == "ExceptionThrow" || name == "NestingExceptionThrow") {
      return CallableKind::kException;
    }
  } else {
    // No class name: the keys only one kind has.
    if (member(callable, "methodName") || member(callable, "signature")) {
      return CallableKind::kMethod;
    }
    if (member(callable, key::kSqlStatement)) return CallableKind::kDatabase;
    if (member(callable, "targetSubTrace") || member(callable, "target")) {
      return CallableKind::kRemote;
    }
    if (member(callable, key::kUri)) return CallableKind::kHttp;
    if (member(callable, "errorMessage")) return CallableKind::kException;
    if (member(callable, "loggingLevel")) return CallableKind::kLogging;
  }
  const Json* children = member(callable, key::kChildren);
  return children != nullptr && children->is_array() ? CallableKind::kOtherNesting
                                                     : CallableKind::kUnknown;
}

bool is_nesting(CallableKind kind) {
  return kind == CallableKind::kMethod || kind == CallableKind::kHttp ||
         kind == CallableKind::kUseCase || kind == CallableKind::kOtherNesting;
}

std::string_view to_string(CallableKind kind) {
  switch (kind) {
    case CallableKind::kMethod:
      return "MethodInvocation";
    case CallableKind::kHttp:
      return "HTTPRequestProcessing";
    case CallableKind::kUseCase:
      return "UseCaseInvocation";
    case CallableKind::kOtherNesting:
      return "NestingCallable";
    case CallableKind::kDatabase:
      return "DatabaseInvocation";
    case CallableKind::kRemote:
      return "RemoteInvocation";
    case CallableKind::kLogging:
      return "LoggingInvocation";
    case CallableKind::kException:
      return "ExceptionThrow";
    case CallableKind::kUnknown:
      break;
  }
  return "Callable";
}

const Json* member(const Json& object, Keys keys) {
  if (!object.is_object()) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = object.find(keys[i]);
    if (it != object.end()) return &*it;
  }
  return nullptr;
}

const Json* additional_information(const Json& object, std::string_view name) {
  std::string dotted = "additionalInformation.";
  dotted += name;
  if (const Json* v = member(object, std::string_view(dotted))) return v;
  dotted.erase(dotted.find('.'), 1);
  return member(object, std::string_view(dotted));
}

bool is_missing(const Json* value) {
  return value == nullptr || value->is_null() ||
         (value->is_string() && value->get_ref<const std::string&>() == "undefined");
}

std::string_view type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number";
    default:
      return "a binary value";
  }
}

std::optional<int64_t> optional_number(const Json* value, std::string* error) {
  if (is_missing(value)) return std::nullopt;
  int64_t v = 0;
  if (value->is_number_integer()) {
    // number_unsigned is an integer too: values past INT64_MAX are out of range.
    if (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t{INT64_MAX}) {
      *error = "number out of range";
      return std::nullopt;
    }
    v = value->get<int64_t>();
  } else if (value->is_number_float()) {
    const double d = value->get<double>();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) {
      *error = "number out of range";
      return std::nullopt;
    }
    v = std::llround(d);
  } else {
    *error = "expected a number, got " + std::string(type_name(*value));
    return std::nullopt;
  }
  if (v == -1) return std::nullopt;
  return v;
}

std::optional<std::string_view> optional_string(const Json* value, std::string* error) {
  if (is_missing(value)) return std::nullopt;
  if (!value->is_string()) {
    *error = "expected a string, got " + std::string(type_name(*value));
    return std::nullopt;
  }
  return std::string_view(value->get_ref<const std::string&>());
}

std::optional<bool> optional_bool(const Json* value, std::string* error) {
  if (is_missing(value)) return std::nullopt;
  if (!value->is_boolean()) {
    *error = "expected a boolean, got " + std::string(type_name(*value));
    return std::nullopt;
  }
  return value->get<bool>();
}

}  // namespace sonde::format::openxtrace
