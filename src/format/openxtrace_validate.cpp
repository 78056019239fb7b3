#include "format/openxtrace_validate.hpp"

#include <cstdlib>
#include <deque>
#include <unordered_set>

#include "format/openxtrace_splitter.hpp"

namespace sonde::format {
namespace {

using openxtrace::CallableKind;
using openxtrace::Json;
using openxtrace::JsonPathTree;

// Times of a callable as far as they are known.
struct Timing {
  std::optional<int64_t> entry_ns;  // exact (sonde) or from milliseconds
  bool exact = false;               // entry_ns has ns precision
  std::optional<int64_t> timestamp_ms, exit_ms, response_ns, exclusive_ns;
  std::optional<int64_t> end_ns() const {
    if (entry_ns && response_ns) return *entry_ns + *response_ns;
    return std::nullopt;
  }
};

bool is_timed(CallableKind k) {
  return k != CallableKind::kLogging && k != CallableKind::kException &&
         k != CallableKind::kUnknown;
}

class Validator {
 public:
  Validator(const std::string& path, std::vector<OpenXtraceIssue>& issues)
      : paths_(path), issues_(issues) {}

  void run(const Json& trace) {
    if (!trace.is_object()) return error(-1, "a trace must be an object");
    const Json* root = openxtrace::member(trace, openxtrace::key::kRootOfTrace);
    if (root == nullptr || !root->is_object()) return error(-1, "no root sub-trace (rootOfTrace)");
    std::deque<std::pair<const Json*, int32_t>> subs = {{root, paths_.key(-1, "rootOfTrace")}};
    while (!subs.empty()) {
      auto [sub, seg] = subs.front();
      subs.pop_front();
      sub_trace(*sub, seg, subs);
    }
  }

 private:
  void error(int32_t seg, std::string m) { add(IssueSeverity::kError, seg, std::move(m)); }
  void warning(int32_t seg, std::string m) { add(IssueSeverity::kWarning, seg, std::move(m)); }
  void add(IssueSeverity s, int32_t seg, std::string m) {
    issues_.push_back({s, paths_.text(seg), std::move(m)});
  }

  // A number, or nothing when missing or of another type (reported).
  std::optional<int64_t> number(const Json& obj, openxtrace::Keys keys, int32_t seg) {
    std::string e;
    std::optional<int64_t> n = openxtrace::optional_number(openxtrace::member(obj, keys), &e);
    if (!e.empty()) error(paths_.key(seg, keys.first()), e);
    return n;
  }

  Timing timing(const Json& c, int32_t seg) {
    Timing t;
    std::string e;
    t.entry_ns = openxtrace::optional_number(
        openxtrace::additional_information(c, "sonde.timestampNanos"), &e);
    t.exact = t.entry_ns.has_value();
    t.timestamp_ms = number(c, openxtrace::key::kTimeStamp, seg);
    if (!t.entry_ns && t.timestamp_ms && *t.timestamp_ms < INT64_MAX / openxtrace::kNanosPerMilli) {
      t.entry_ns = *t.timestamp_ms * openxtrace::kNanosPerMilli;
    }
    t.exit_ms = number(c, "exitTime", seg);
    t.response_ns = number(c, "responseTime", seg);
    t.exclusive_ns = number(c, "exclusiveTime", seg);
    return t;
  }

  void sub_trace(const Json& sub, int32_t seg, std::deque<std::pair<const Json*, int32_t>>& subs) {
    if (!sub.is_object()) return error(seg, "a sub-trace must be an object");
    if (std::optional<int64_t> id = number(sub, "subTraceId", seg)) {
      if (!ids_.insert(*id).second) error(seg, "sub-trace id " + std::to_string(*id) + " repeated");
    }
    const Json* root = openxtrace::member(sub, openxtrace::key::kRootOfSubTrace);
    const int32_t root_seg = paths_.key(seg, "rootOfSubTrace");
    if (root == nullptr || !root->is_object()) {
      return error(seg, "no root callable (rootOfSubTrace)");
    }
    int64_t child_sub_traces_ns = 0;
    bool child_times_known = true;
    auto note_child = [&](const Json& child, int32_t child_seg) {
      const Json* r =
          child.is_object() ? openxtrace::member(child, openxtrace::key::kRootOfSubTrace) : nullptr;
      std::optional<int64_t> d =
          r != nullptr && r->is_object() ? number(*r, "responseTime", child_seg) : std::nullopt;
      if (d) {
        child_sub_traces_ns += *d;
      } else {
        child_times_known = false;
      }
      subs.push_back({&child, child_seg});
    };
    callables(*root, root_seg, note_child);
    if (const Json* listed = openxtrace::member(sub, openxtrace::key::kSubTraces);
        listed != nullptr && listed->is_array()) {
      for (size_t i = 0; i < listed->size(); ++i) {
        note_child((*listed)[i], paths_.index(paths_.key(seg, "subTraces"), i));
      }
    }
    const std::optional<int64_t> response = number(sub, "responseTime", seg);
    const std::optional<int64_t> exclusive = number(sub, "exclusiveTime", seg);
    if (response && exclusive && child_times_known) {
      const int64_t expected = *response - child_sub_traces_ns;
      if (*exclusive != expected) {
        error(seg, "exclusiveTime " + std::to_string(*exclusive) + " ns, expected " +
                       std::to_string(expected) + " (responseTime minus the child sub-traces')");
      } else if (expected < 0) {
        warning(seg,
                "child sub-traces take longer than the sub-trace (asynchronous, or clocks "
                "differ)");
      }
    }
  }

  template <typename OnTarget>
  void callables(const Json& root, int32_t root_seg, OnTarget& on_target) {
    struct Item {
      const Json* node;
      int32_t seg;
      const Json* parent;  // nesting caller, or nullptr for the sub-trace root
      Timing parent_timing;
    };
    std::vector<Item> todo = {{&root, root_seg, nullptr, {}}};
    while (!todo.empty()) {
      const Item item = todo.back();
      todo.pop_back();
      const Json& c = *item.node;
      if (!c.is_object()) {
        error(item.seg, "a callable must be an object");
        continue;
      }
      const CallableKind kind = openxtrace::classify_callable(c);
      if (kind == CallableKind::kUnknown) warning(item.seg, "callable of unknown type");
      if (kind == CallableKind::kHttp && item.parent != nullptr) {
        warning(item.seg, "HTTPRequestProcessing below the sub-trace root");
      }
      const Timing t = timing(c, item.seg);
      check_own_times(c, kind, t, item.seg);
      if (item.parent != nullptr) {
        check_within(item.parent_timing, t, kind, item.seg);
      }
      const Json* children = openxtrace::member(c, openxtrace::key::kChildren);
      const bool has_children = children != nullptr && children->is_array() && !children->empty();
      if (children != nullptr && !children->is_null() && !children->is_array()) {
        error(paths_.key(item.seg, "children"), "children must be an array");
      }
      if (!openxtrace::is_nesting(kind)) {
        if (has_children) {
          error(item.seg, std::string(openxtrace::to_string(kind)) + " cannot have callees");
        }
        if (kind == CallableKind::kRemote) remote_target(c, t, item.seg, on_target);
        continue;
      }
      if (!has_children) {
        if (t.response_ns && t.exclusive_ns && *t.exclusive_ns != *t.response_ns) {
          error(item.seg, "exclusiveTime differs from responseTime without callees");
        }
        continue;
      }
      check_exclusive(*children, t, item.seg);
      const int32_t children_seg = paths_.key(item.seg, "children");
      for (size_t i = children->size(); i-- > 0;) {
        todo.push_back({&(*children)[i], paths_.index(children_seg, i), &c, t});
      }
    }
  }

  void check_own_times(const Json& c, CallableKind kind, const Timing& t, int32_t seg) {
    if (!is_timed(kind)) return;
    if (t.timestamp_ms && t.exit_ms && t.response_ns) {
      const int64_t span_ms = *t.exit_ms - *t.timestamp_ms;
      // Both ends are floored to milliseconds: one millisecond of slack.
      if (std::llabs(span_ms * openxtrace::kNanosPerMilli - *t.response_ns) >
          openxtrace::kNanosPerMilli) {
        error(seg, "exitTime - timeStamp is " + std::to_string(span_ms) +
                       " ms but responseTime is " + std::to_string(*t.response_ns) + " ns");
      }
    }
    if (t.response_ns && *t.response_ns < 0) error(seg, "negative responseTime");
    if (kind != CallableKind::kMethod) return;
    const std::optional<int64_t> cpu = number(c, openxtrace::key::kCpuTime, seg);
    const std::optional<int64_t> exclusive_cpu = number(c, openxtrace::key::kExclusiveCpuTime, seg);
    if (cpu && exclusive_cpu && *exclusive_cpu > *cpu) {
      error(seg, "exclusiveCPUTime exceeds CPUTime");
    }
    if (cpu && t.response_ns && *cpu > *t.response_ns) error(seg, "CPUTime exceeds responseTime");
  }

  void check_exclusive(const Json& children, const Timing& t, int32_t seg) {
    if (!t.response_ns || !t.exclusive_ns) return;
    int64_t callees = 0;
    bool remote = false;
    for (const Json& child : children) {
      if (!child.is_object()) return;
      const CallableKind k = openxtrace::classify_callable(child);
      if (!is_timed(k)) continue;
      std::string e;
      std::optional<int64_t> d =
          openxtrace::optional_number(openxtrace::member(child, "responseTime"), &e);
      if (!d) return;  // not all known: nothing to compare
      callees += *d;
      remote = remote || k == CallableKind::kRemote;
    }
    const int64_t expected = *t.response_ns - callees;
    if (*t.exclusive_ns != expected) {
      error(seg, "exclusiveTime " + std::to_string(*t.exclusive_ns) + " ns, expected " +
                     std::to_string(expected) + " (responseTime minus the callees')");
    } else if (expected < 0) {
      if (remote) {
        warning(seg, "callees take longer than the caller (an asynchronous remote callee?)");
      } else {
        error(seg, "negative exclusiveTime: callees take longer than the caller");
      }
    }
  }

  // Is `inner` within `outer`? Remote callees and sub-traces only warn.
  void check_within(const Timing& outer, const Timing& inner, CallableKind kind, int32_t seg) {
    if (!outer.entry_ns || !inner.entry_ns) return;
    const int64_t slack = outer.exact && inner.exact ? 0 : openxtrace::kNanosPerMilli;
    const std::optional<int64_t> outer_end = outer.end_ns();
    const std::optional<int64_t> inner_end = is_timed(kind) ? inner.end_ns() : inner.entry_ns;
    const bool before = *inner.entry_ns + slack < *outer.entry_ns;
    const bool after = outer_end && inner_end && *inner_end > *outer_end + slack;
    if (!before && !after) return;
    const std::string what = before ? "starts before its caller" : "ends after its caller";
    if (kind == CallableKind::kRemote) {
      warning(seg, "remote callee " + what + " (asynchronous, or clocks differ)");
    } else {
      error(seg, "callee " + what);
    }
  }

  template <typename OnTarget>
  void remote_target(const Json& remote, const Timing& t, int32_t seg, OnTarget& on_target) {
    const Json* target = openxtrace::member(remote, "targetSubTrace");
    if (openxtrace::is_missing(target)) return;
    const int32_t target_seg = paths_.key(seg, "targetSubTrace");
    if (target->is_object()) {
      const Json* root = openxtrace::member(*target, openxtrace::key::kRootOfSubTrace);
      if (root != nullptr && root->is_object()) {
        const Timing inner = timing(*root, paths_.key(target_seg, "rootOfSubTrace"));
        if (t.entry_ns && inner.entry_ns) {
          const int64_t slack = t.exact && inner.exact ? 0 : openxtrace::kNanosPerMilli;
          const std::optional<int64_t> outer_end = t.end_ns();
          const std::optional<int64_t> inner_end = inner.end_ns();
          if (*inner.entry_ns + slack < *t.entry_ns ||
              (outer_end && inner_end && *inner_end > *outer_end + slack)) {
            warning(target_seg,
                    "target sub-trace lies outside its RemoteInvocation (asynchronous, or clocks "
                    "differ)");
          }
        }
      }
    }
    on_target(*target, target_seg);
  }

  JsonPathTree paths_;
  std::vector<OpenXtraceIssue>& issues_;
  std::unordered_set<int64_t> ids_;
};

}  // namespace

std::vector<OpenXtraceIssue> validate_openxtrace_trace(const Json& trace, const std::string& path) {
  std::vector<OpenXtraceIssue> issues;
  Validator(path, issues).run(trace);
  return issues;
}

std::vector<OpenXtraceIssue> validate_openxtrace(std::istream& in) {
  std::vector<OpenXtraceIssue> issues;
  const openxtrace::SplitResult split = openxtrace::split_traces(
      in, openxtrace::kMaxOpenXtraceNesting, [&](Json&& trace, const std::string& path) {
        std::vector<OpenXtraceIssue> found = validate_openxtrace_trace(trace, path);
        issues.insert(issues.end(), found.begin(), found.end());
        return true;
      });
  if (!split.ok) issues.push_back({IssueSeverity::kError, "", split.error});
  return issues;
}

size_t count_errors(const std::vector<OpenXtraceIssue>& issues) {
  size_t n = 0;
  for (const OpenXtraceIssue& i : issues) n += i.severity == IssueSeverity::kError ? 1 : 0;
  return n;
}

}  // namespace sonde::format
