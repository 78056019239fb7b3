// What "OPEN.xtrace JSON" means when reading it: the key names and missing
// value conventions of both published dialects, shared by the reader and
// the validator.
//   - the OPEN.xtrace fork's JsonOPENxtraceSerializer: "rootOfTrace",
//     "rootOfSubTrace", "children", "@class" with the interface's full
//     name, -1 for a missing number, null for a missing string or object;
//   - inspectIT's server exporter: the same keys, but "undefined" for a
//     missing string, "rootOfSubtrace" in its own sub-traces, no "port",
//     and "additionalInformation<name>" without a dot.
// Units: timeStamp / exitTime in milliseconds since the epoch, all other
// times (responseTime, exclusiveTime, CPUTime, ...) in nanoseconds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::format::openxtrace {

// OPEN.xtrace times in milliseconds (timestamp) become nanoseconds.
inline constexpr int64_t kNanosPerMilli = 1'000'000;

using Json = nlohmann::json;

// One key, or several spellings of one key (first the one sonde writes).
class Keys {
 public:
  template <size_t N>
  constexpr Keys(const std::string_view (&names)[N]) : list_(names), size_(N) {}
  constexpr Keys(std::string_view one) : one_(one), size_(1) {}
  constexpr Keys(const char* one) : one_(one), size_(1) {}
  constexpr size_t size() const { return size_; }
  constexpr std::string_view operator[](size_t i) const { return list_ ? list_[i] : one_; }
  constexpr std::string_view first() const { return (*this)[0]; }

 private:
  const std::string_view* list_ = nullptr;
  std::string_view one_;
  size_t size_;
};

// Key spellings, first the one sonde writes.
namespace key {
inline constexpr std::string_view kRootOfTrace[] = {"rootOfTrace", "root"};
inline constexpr std::string_view kRootOfSubTrace[] = {"rootOfSubTrace", "rootOfSubtrace"};
inline constexpr std::string_view kSubTraces[] = {"subTraces", "subtraces"};
inline constexpr std::string_view kChildren[] = {"children", "callees"};
inline constexpr std::string_view kTimeStamp[] = {"timeStamp", "timestamp"};
inline constexpr std::string_view kThreadId[] = {"threadID", "threadId"};
inline constexpr std::string_view kSqlStatement[] = {"SQLStatement", "sqlStatement"};
inline constexpr std::string_view kDbUrl[] = {"dbURL", "dbUrl"};
inline constexpr std::string_view kUri[] = {"uri", "URI"};
inline constexpr std::string_view kRequestMethod[] = {"requestMethod", "method"};
inline constexpr std::string_view kCpuTime[] = {"CPUTime", "cpuTime"};
inline constexpr std::string_view kExclusiveCpuTime[] = {"exclusiveCPUTime", "exclusiveCpuTime"};
}  // namespace key

// The package of the interfaces the fork names in "@class".
inline constexpr std::string_view kApiCorePackage = "org.spec.research.open.xtrace.api.core.";
inline constexpr std::string_view kCallablesPackage =
    "org.spec.research.open.xtrace.api.core.callables.";

enum class CallableKind : uint8_t {
  kMethod,        // MethodInvocation
  kHttp,          // HTTPRequestProcessing
  kUseCase,       // UseCaseInvocation (the fork's extension)
  kOtherNesting,  // an unknown class with children (e.g. inspectIT's span callables)
  kDatabase,      // DatabaseInvocation
  kRemote,        // RemoteInvocation
  kLogging,       // LoggingInvocation
  kException,     // ExceptionThrow
  kUnknown,       // an unknown class without children
};

// Classifies a callable by the simple name of its "@class" (prefixes such
// as inspectIT's "IIT" and an "Impl" suffix ignored), or, without one, by
// its characteristic keys.
CallableKind classify_callable(const Json& callable);
bool is_nesting(CallableKind kind);
std::string_view to_string(CallableKind kind);  // "MethodInvocation", ...

// The member under the first key spelling present, or nullptr.
const Json* member(const Json& object, Keys keys);
// Additional information `name`: "additionalInformation.<name>" (fork)
// or "additionalInformation<name>" (inspectIT); nullptr if neither.
const Json* additional_information(const Json& object, std::string_view name);

// Missing values: no member, null, or the string "undefined"; for numbers
// also -1 (optional_number), as both serializers write for "unknown".
bool is_missing(const Json* value);

// Typed access that reports a wrong type instead of guessing: the result
// is empty for a missing value, and `error` is set (and the result empty)
// for a value of another type. Floats are rounded to integers.
std::optional<int64_t> optional_number(const Json* value, std::string* error);
std::optional<std::string_view> optional_string(const Json* value, std::string* error);
std::optional<bool> optional_bool(const Json* value, std::string* error);

// A JSON path kept as a tree of segments, so that deep nesting costs one
// segment per level instead of one growing string per level. The text is
// only built for an error message.
class JsonPathTree {
 public:
  explicit JsonPathTree(std::string root) : root_(std::move(root)) {}
  // Segments under `parent` (-1: the root); returns the new segment.
  int32_t key(int32_t parent, std::string_view name) { return add({parent, name, -1}); }
  int32_t index(int32_t parent, size_t i) { return add({parent, {}, static_cast<int64_t>(i)}); }
  std::string text(int32_t seg) const {
    std::vector<const Segment*> chain;
    for (int32_t s = seg; s >= 0; s = segments_[static_cast<size_t>(s)].parent) {
      chain.push_back(&segments_[static_cast<size_t>(s)]);
    }
    std::string out = root_;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      out += '/';
      out += (*it)->index >= 0 ? std::to_string((*it)->index) : std::string((*it)->name);
    }
    return out;
  }

 private:
  struct Segment {
    int32_t parent;
    std::string_view name;  // a key of the document being converted, or a literal
    int64_t index;          // array index, -1 for a key
  };
  int32_t add(Segment s) {
    segments_.push_back(s);
    return static_cast<int32_t>(segments_.size() - 1);
  }
  std::string root_;
  std::vector<Segment> segments_;
};

// "a number", "a string", ... for error messages.
std::string_view type_name(const Json& value);

}  // namespace sonde::format::openxtrace
