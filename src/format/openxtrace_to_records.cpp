// OPEN.xtrace's JSON into sonde's records. Over 500 lines: one Conversion
// walks the nested traces, keeping the frames, pending sub-traces and the
// ids it makes up as it goes.
#include "format/openxtrace_to_records.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>

#include "format/callable_schemas.hpp"
#include "format/schema.hpp"

namespace sonde::format::openxtrace {
namespace {

// Ids made up for sub-traces without a usable one: a range sonde's monitor
// does not hand out (its ids have bit 32 set and bits 56-62 clear).
constexpr int64_t kSyntheticIdBase = int64_t{0x5e} << 56;

struct ConversionError {
  int32_t seg;
  std::string reason;
};

// One callable being walked: a nesting callable open on the stack.
struct Frame {
  const Json* node = nullptr;
  int32_t seg = -1;
  CallableKind kind = CallableKind::kMethod;
  const Json* children = nullptr;    // array, or null for none
  const Json* only_child = nullptr;  // a synthetic frame's one callee
  size_t next = 0;
  int64_t tin = 0;
  std::optional<int64_t> response;  // ns
  std::optional<int64_t> exit_ns;
  int64_t latest = 0;  // latest time seen inside
  bool failed = false;
  std::string_view cause;
  std::string_view operation;
  std::string_view component;
};

struct PendingSubTrace {
  const Json* node;
  int32_t seg;
  int64_t trace_id;
  int64_t parent_trace_id;  // == trace_id for the root
  int32_t parent_order;
};

// Converts one trace; thrown ConversionErrors end it.
class Conversion {
 public:
  Conversion(StringPool& pool, ConversionNotes& notes, int64_t& next_synthetic_id,
             const std::string& path, std::vector<PlannedRecord>& out)
      : pool_(pool),
        notes_(notes),
        next_synthetic_id_(next_synthetic_id),
        paths_(path),
        out_(out),
        trace_metadata_(find_builtin_schema(kieker_class::kTraceMetadata)),
        before_(find_builtin_schema(kieker_class::kBeforeOperation)),
        after_(find_builtin_schema(kieker_class::kAfterOperation)),
        failed_(find_builtin_schema(kieker_class::kAfterOperationFailed)),
        database_(find_builtin_schema(callable_class::kDatabaseCall)),
        http_(find_builtin_schema(callable_class::kHttpRequest)),
        exception_(find_builtin_schema(callable_class::kExceptionThrow)),
        log_(find_builtin_schema(callable_class::kLogMessage)),
        remote_(find_builtin_schema(callable_class::kRemoteCall)) {}

  void run(const Json& trace) {
    if (!trace.is_object()) fail(-1, "expected a trace object, got " + kind_of(trace));
    const Json* root = member(trace, key::kRootOfTrace);
    const int32_t root_seg = paths_.key(-1, "rootOfTrace");
    if (root == nullptr || root->is_null()) fail(-1, "the trace has no rootOfTrace");
    std::optional<int64_t> trace_id = number(trace, "traceId", -1);
    if (!trace_id) trace_id = number(*root, "subTraceId", root_seg);
    const int64_t id = claim_id(trace_id);
    std::deque<PendingSubTrace> pending = {{root, root_seg, id, id, -1}};
    while (!pending.empty()) {
      PendingSubTrace p = pending.front();
      pending.pop_front();
      walk_sub_trace(p, pending);
    }
  }

  std::string path_text(int32_t seg) const { return paths_.text(seg); }

 private:
  [[noreturn]] void fail(int32_t seg, std::string reason) {
    throw ConversionError{seg, std::move(reason)};
  }
  static std::string kind_of(const Json& v) { return std::string(type_name(v)); }

  // Typed members; a wrong type fails with the member's path.
  std::optional<int64_t> number(const Json& obj, Keys keys, int32_t seg) {
    std::string error;
    std::optional<int64_t> n = optional_number(member(obj, keys), &error);
    if (!error.empty()) fail(paths_.key(seg, keys.first()), error);
    return n;
  }
  std::optional<std::string_view> text(const Json& obj, Keys keys, int32_t seg) {
    std::string error;
    std::optional<std::string_view> s = optional_string(member(obj, keys), &error);
    if (!error.empty()) fail(paths_.key(seg, keys.first()), error);
    return s;
  }
  std::string_view text_or(const Json& obj, std::string_view k, int32_t seg,
                           std::string_view fallback = {}) {
    return pool_.intern(text(obj, k, seg).value_or(fallback));
  }
  std::optional<int64_t> extra_number(const Json& obj, std::string_view name, int32_t seg) {
    std::string error;
    std::optional<int64_t> n = optional_number(additional_information(obj, name), &error);
    if (!error.empty()) fail(paths_.key(seg, name), "additional information " + error);
    return n;
  }
  std::optional<std::string_view> extra_text(const Json& obj, std::string_view name, int32_t seg) {
    std::string error;
    std::optional<std::string_view> s = optional_string(additional_information(obj, name), &error);
    if (!error.empty()) fail(paths_.key(seg, name), "additional information " + error);
    return s;
  }

  // Flattens a map of strings (or of string arrays) into [k1, v1, k2, v2...].
  std::vector<std::string_view> flat_map(const Json& obj, std::string_view k, int32_t seg) {
    std::vector<std::string_view> out;
    const Json* v = member(obj, k);
    if (is_missing(v)) return out;
    if (!v->is_object()) fail(paths_.key(seg, k), "expected an object, got " + kind_of(*v));
    for (const auto& [name, value] : v->items()) {
      const std::string_view key_text = pool_.intern(name);
      auto add = [&](const Json& item) {
        if (!item.is_string() && !item.is_null()) {
          fail(paths_.key(paths_.key(seg, k), key_text),
               "expected a string or an array of strings, got " + kind_of(item));
        }
        out.push_back(key_text);
        out.push_back(item.is_string() ? pool_.intern(item.get_ref<const std::string&>()) : "");
      };
      if (value.is_array()) {
        for (const Json& item : value) add(item);
      } else {
        add(value);
      }
    }
    return out;
  }

  // A list of strings: an array, or a map from positions "1", "2", ... as
  // the fork writes parameter bindings (gaps become empty strings).
  std::vector<std::string_view> string_list(const Json& obj, std::string_view k, int32_t seg) {
    std::vector<std::string_view> out;
    const Json* v = member(obj, k);
    if (is_missing(v)) return out;
    const int32_t at = paths_.key(seg, k);
    if (v->is_array()) {
      for (const Json& item : *v) {
        if (!item.is_string()) fail(at, "expected strings, got " + kind_of(item));
        out.push_back(pool_.intern(item.get_ref<const std::string&>()));
      }
      return out;
    }
    if (v->is_string()) return {pool_.intern(v->get_ref<const std::string&>())};
    if (!v->is_object()) fail(at, "expected an array or an object, got " + kind_of(*v));
    for (const auto& [position, value] : v->items()) {
      char* end = nullptr;
      const long n = std::strtol(position.c_str(), &end, 10);
      if (end == position.c_str() || *end != '\0' || n < 0 || n > 100000) {
        fail(at, "expected positions as keys, got \"" + position + "\"");
      }
      if (!value.is_string() && !value.is_null()) {
        fail(paths_.key(at, position), "expected a string, got " + kind_of(value));
      }
      const size_t slot = n > 0 ? static_cast<size_t>(n - 1) : 0;
      if (out.size() <= slot) out.resize(slot + 1);
      out[slot] = value.is_string() ? pool_.intern(value.get_ref<const std::string&>()) : "";
    }
    return out;
  }

  int64_t claim_id(std::optional<int64_t> wanted) {
    if (wanted && used_ids_.insert(*wanted).second) return *wanted;
    ++notes_.synthesized_ids;
    while (!used_ids_.insert(next_synthetic_id_).second) ++next_synthetic_id_;
    return next_synthetic_id_++;
  }

  // Entry time in ns: sonde's exact one if written, else the ms timestamp.
  int64_t entry_time(const Json& callable, int32_t seg, int64_t fallback) {
    if (std::optional<int64_t> ns = extra_number(callable, "sonde.timestampNanos", seg)) return *ns;
    if (std::optional<int64_t> ms = number(callable, key::kTimeStamp, seg)) return millis(*ms, seg);
    return fallback;
  }
  int64_t millis(int64_t ms, int32_t seg) {
    int64_t ns = 0;
    if (__builtin_mul_overflow(ms, kNanosPerMilli, &ns)) fail(seg, "timestamp out of range");
    return ns;
  }
  int64_t plus(int64_t a, int64_t b, int32_t seg) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) fail(seg, "time out of range");
    return sum;
  }
  // Duration from responseTime (ns) or exitTime (ms); -1 if neither.
  int64_t duration(const Json& callable, int32_t seg, int64_t tin) {
    if (std::optional<int64_t> r = number(callable, "responseTime", seg); r && *r >= 0) return *r;
    if (std::optional<int64_t> exit = number(callable, "exitTime", seg)) {
      const int64_t exit_ns = millis(*exit, seg);
      if (exit_ns >= tin) return exit_ns - tin;
    }
    return -1;
  }

  PlannedRecord& plan(const RecordSchema* schema, int64_t time) {
    PlannedRecord& r = out_.emplace_back();
    r.schema = schema;
    r.logging_timestamp = time;
    return r;
  }

  void walk_sub_trace(const PendingSubTrace& p, std::deque<PendingSubTrace>& pending) {
    const Json& sub = *p.node;
    if (!sub.is_object()) fail(p.seg, "expected a sub-trace object, got " + kind_of(sub));
    ++notes_.sub_traces;
    const Json* root = member(sub, key::kRootOfSubTrace);
    const int32_t root_seg =
        paths_.key(p.seg, root != nullptr && member(sub, "rootOfSubTrace") ? "rootOfSubTrace"
                                                                           : "rootOfSubtrace");
    if (root == nullptr || root->is_null()) fail(p.seg, "the sub-trace has no rootOfSubTrace");
    if (!root->is_object()) fail(root_seg, "expected a callable object, got " + kind_of(*root));

    trace_id_ = p.trace_id;
    order_ = 0;
    int64_t parent_trace_id = p.parent_trace_id;
    int32_t parent_order = p.parent_order;
    if (p.parent_trace_id == p.trace_id) {
      // A root sub-trace written by sonde keeps a link to a parent outside the file.
      if (std::optional<int64_t> link = extra_number(*root, "sonde.parentTraceId", root_seg)) {
        parent_trace_id = *link;
        parent_order =
            static_cast<int32_t>(extra_number(*root, "sonde.parentOrderId", root_seg).value_or(-1));
      }
    }
    const std::string_view host = text_or(sub, "host", p.seg, "<default-host>");
    const int64_t thread = number(*root, key::kThreadId, root_seg).value_or(-1);
    const std::string_view session =
        pool_.intern(extra_text(*root, "sonde.sessionId", root_seg).value_or("<no-session-id>"));
    cursor_ = entry_time(*root, root_seg, 0);
    PlannedRecord& meta = plan(trace_metadata_, cursor_);
    meta.values = {trace_id_, thread, session, host, parent_trace_id, int64_t{parent_order}};

    reached_.clear();
    std::vector<Frame> stack;
    const CallableKind root_kind = classify_callable(*root);
    if (is_nesting(root_kind)) {
      open(stack, *root, root_seg, root_kind);
    } else {
      // Nothing to hang the callable on: an execution stands for it.
      ++notes_.synthetic_executions;
      Frame f;
      f.node = root;
      f.seg = root_seg;
      f.kind = root_kind;
      f.only_child = root;
      f.tin = cursor_;
      f.latest = cursor_;
      f.operation = pool_.intern("<" + std::string(to_string(root_kind)) + ">");
      stack.push_back(f);
      emit_before(stack.back());
    }
    while (!stack.empty()) {
      const size_t top = stack.size() - 1;
      const Json* child = nullptr;
      int32_t child_seg = -1;
      if (stack[top].only_child != nullptr) {
        child = stack[top].only_child;
        child_seg = stack[top].seg;
        stack[top].only_child = nullptr;
      } else if (stack[top].children != nullptr && stack[top].next < stack[top].children->size()) {
        const size_t i = stack[top].next++;
        child = &(*stack[top].children)[i];
        child_seg = paths_.index(paths_.key(stack[top].seg, "children"), i);
      }
      if (child == nullptr) {
        close(stack);
        continue;
      }
      if (!child->is_object())
        fail(child_seg, "expected a callable object, got " + kind_of(*child));
      const CallableKind kind = classify_callable(*child);
      if (is_nesting(kind)) {
        open(stack, *child, child_seg, kind);
      } else {
        leaf(stack[top], *child, child_seg, kind, pending);
      }
    }

    // Sub-traces listed under the sub-trace rather than reached through a
    // RemoteInvocation: children whose calling position is unknown.
    const Json* listed = member(sub, key::kSubTraces);
    if (is_missing(listed)) return;
    const int32_t listed_seg = paths_.key(p.seg, "subTraces");
    if (!listed->is_array()) fail(listed_seg, "expected an array, got " + kind_of(*listed));
    for (size_t i = 0; i < listed->size(); ++i) {
      const Json& s = (*listed)[i];
      const int32_t seg = paths_.index(listed_seg, i);
      std::optional<int64_t> id = s.is_object() ? number(s, "subTraceId", seg) : std::nullopt;
      if (id && reached_.count(*id) != 0) continue;  // the same one, also written inline
      pending.push_back({&s, seg, claim_id(id), p.trace_id, -1});
    }
  }

  void open(std::vector<Frame>& stack, const Json& node, int32_t seg, CallableKind kind) {
    Frame f;
    f.node = &node;
    f.seg = seg;
    f.kind = kind;
    f.tin = entry_time(node, seg, cursor_);
    f.latest = f.tin;
    if (std::optional<int64_t> r = number(node, "responseTime", seg); r && *r >= 0) f.response = r;
    if (std::optional<int64_t> exit = number(node, "exitTime", seg)) f.exit_ns = millis(*exit, seg);
    const Json* children = member(node, key::kChildren);
    if (!is_missing(children)) {
      if (!children->is_array()) {
        fail(paths_.key(seg, "children"), "expected an array, got " + kind_of(*children));
      }
      f.children = children;
    }
    name_execution(f);
    cursor_ = f.tin;
    stack.push_back(f);
    emit_before(stack.back());
    if (kind == CallableKind::kHttp) emit_http(stack.back());
  }

  void name_execution(Frame& f) {
    const Json& n = *f.node;
    std::optional<std::string_view> component = extra_text(n, "sonde.component", f.seg);
    switch (f.kind) {
      case CallableKind::kMethod: {
        const std::optional<std::string_view> pkg = text(n, "packageName", f.seg);
        const std::optional<std::string_view> cls = text(n, "className", f.seg);
        if (std::optional<std::string_view> sig = text(n, "signature", f.seg);
            sig && !sig->empty()) {
          f.operation = pool_.intern(*sig);
        } else {
          f.operation = pool_.intern(composed_signature(n, f.seg, pkg, cls));
        }
        if (!component) {
          std::string c;
          if (pkg && !pkg->empty()) c = std::string(*pkg);
          if (cls && !cls->empty()) c += (c.empty() ? "" : ".") + std::string(*cls);
          component = pool_.intern(c);
        }
        break;
      }
      case CallableKind::kHttp: {
        if (std::optional<std::string_view> sig = extra_text(n, "sonde.signature", f.seg)) {
          f.operation = pool_.intern(*sig);
        } else {
          const std::optional<std::string_view> method = text(n, key::kRequestMethod, f.seg);
          const std::optional<std::string_view> uri = text(n, key::kUri, f.seg);
          std::string op = method ? std::string(*method) + " " : std::string();
          op += uri ? std::string(*uri) : std::string("<HTTPRequestProcessing>");
          f.operation = pool_.intern(op);
        }
        if (!component) component = "HTTPRequestProcessing";
        break;
      }
      case CallableKind::kUseCase:
        f.operation = text_or(n, "useCaseName", f.seg, "<UseCaseInvocation>");
        if (!component) component = "UseCaseInvocation";
        break;
      default: {
        const Json* cls = member(n, "@class");
        f.operation = pool_.intern(
            "<" + (cls != nullptr && cls->is_string() ? cls->get<std::string>() : "Callable") +
            ">");
        break;
      }
    }
    f.component = pool_.intern(component.value_or(""));
  }

  // "ret pkg.Class.method(T1, T2)" from the parts a writer left separate.
  std::string composed_signature(const Json& n, int32_t seg, std::optional<std::string_view> pkg,
                                 std::optional<std::string_view> cls) {
    std::string s;
    if (std::optional<std::string_view> ret = text(n, "returnType", seg); ret && !ret->empty()) {
      s = std::string(*ret) + " ";
    }
    if (pkg && !pkg->empty()) s += std::string(*pkg) + ".";
    if (cls && !cls->empty()) s += std::string(*cls) + ".";
    s += text(n, "methodName", seg).value_or("<unknown>");
    if (!is_missing(member(n, "parameterTypes"))) {
      s += "(";
      const std::vector<std::string_view> types = string_list(n, "parameterTypes", seg);
      for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + std::string(types[i]);
      s += ")";
    }
    return s;
  }

  void emit_before(const Frame& f) {
    PlannedRecord& r = plan(before_, f.tin);
    r.values = {f.tin, trace_id_, int64_t{order_++}, f.operation, f.component};
  }

  void close(std::vector<Frame>& stack) {
    Frame& f = stack.back();
    int64_t tout = f.latest;
    if (f.response) {
      tout = plus(f.tin, *f.response, f.seg);
    } else if (f.exit_ns && *f.exit_ns >= f.tin) {
      tout = *f.exit_ns;
    }
    PlannedRecord& r = plan(f.failed ? failed_ : after_, tout);
    r.values = {tout, trace_id_, int64_t{order_++}, f.operation, f.component};
    if (f.failed) r.values.emplace_back(f.cause);
    stack.pop_back();
    if (!stack.empty()) stack.back().latest = std::max(stack.back().latest, tout);
    cursor_ = std::max(cursor_, tout);
  }

  void emit_http(const Frame& f) {
    const Json& n = *f.node;
    PlannedRecord& r = plan(http_, f.tin);
    r.values = {f.tin,
                trace_id_,
                int64_t{order_ - 1},
                pool_.intern(text(n, key::kUri, f.seg).value_or("")),
                pool_.intern(text(n, key::kRequestMethod, f.seg).value_or("")),
                number(n, "responseCode", f.seg).value_or(-1),
                flat_map(n, "HTTPHeaders", f.seg),
                flat_map(n, "HTTPParameters", f.seg),
                flat_map(n, "HTTPAttributes", f.seg),
                flat_map(n, "HTTPSessionAttributes", f.seg),
                flat_map(n, "responseHTTPHeaders", f.seg),
                text_or(n, "body", f.seg)};
  }

  // A callable that nests nothing, inside the innermost open execution.
  void leaf(Frame& parent, const Json& c, int32_t seg, CallableKind kind,
            std::deque<PendingSubTrace>& pending) {
    const int64_t t = entry_time(c, seg, cursor_);
    const int64_t position = order_ - 1;  // the last event before this callable
    const Json* children = member(c, key::kChildren);
    if (children != nullptr && children->is_array()) notes_.dropped_callables += children->size();
    int64_t end = t;
    switch (kind) {
      case CallableKind::kDatabase: {
        const int64_t d = duration(c, seg, t);
        std::optional<std::string_view> sql = text(c, key::kSqlStatement, seg);
        if (!sql) sql = text(c, "unboundSQLStatement", seg);
        if (!sql) sql = text(c, "boundSQLStatement", seg);
        PlannedRecord& r = plan(database_, t);
        r.values = {t,
                    trace_id_,
                    position,
                    d,
                    pool_.intern(sql.value_or("")),
                    optional_flag(c, "prepared", seg),
                    text_or(c, "boundSQLStatement", seg),
                    text_or(c, "unboundSQLStatement", seg),
                    string_list(c, "parameterBindings", seg),
                    text_or(c, "dbProductName", seg),
                    text_or(c, "dbProductVersion", seg),
                    pool_.intern(text(c, key::kDbUrl, seg).value_or(""))};
        if (d > 0) end = plus(t, d, seg);
        break;
      }
      case CallableKind::kRemote: {
        const int64_t d = duration(c, seg, t);
        int64_t target_id = -1;
        const Json* target = member(c, "targetSubTrace");
        if (!is_missing(target)) {
          const int32_t target_seg = paths_.key(seg, "targetSubTrace");
          std::optional<int64_t> wanted =
              target->is_object() ? number(*target, "subTraceId", target_seg) : std::nullopt;
          if (wanted) reached_.insert(*wanted);
          target_id = claim_id(wanted);
          pending.push_back(
              {target, target_seg, target_id, trace_id_, static_cast<int32_t>(position)});
        }
        PlannedRecord& r = plan(remote_, t);
        r.values = {t, trace_id_, position, d, text_or(c, "target", seg), target_id};
        if (d > 0) end = plus(t, d, seg);
        break;
      }
      case CallableKind::kLogging: {
        PlannedRecord& r = plan(log_, t);
        r.values = {t, trace_id_, position, text_or(c, "loggingLevel", seg),
                    text_or(c, "message", seg)};
        break;
      }
      case CallableKind::kException: {
        const std::string_view message = text_or(c, "errorMessage", seg);
        const std::string_view type = text_or(c, "throwableType", seg);
        std::string error;
        const bool propagated =
            optional_bool(additional_information(c, "sonde.propagated"), &error).value_or(false);
        if (!error.empty()) fail(paths_.key(seg, "sonde.propagated"), error);
        PlannedRecord& r = plan(exception_, t);
        r.values = {t,
                    trace_id_,
                    position,
                    type,
                    message,
                    text_or(c, "cause", seg),
                    text_or(c, "stackTrace", seg),
                    propagated};
        if (propagated) {
          parent.failed = true;
          parent.cause = message.empty() ? type : message;
        }
        break;
      }
      default:
        ++notes_.dropped_callables;
        return;
    }
    parent.latest = std::max(parent.latest, end);
    cursor_ = std::max(cursor_, t);
  }

  bool optional_flag(const Json& c, std::string_view k, int32_t seg) {
    std::string error;
    std::optional<bool> b = optional_bool(member(c, k), &error);
    if (!error.empty()) fail(paths_.key(seg, k), error);
    return b.value_or(false);
  }

  StringPool& pool_;
  ConversionNotes& notes_;
  int64_t& next_synthetic_id_;
  JsonPathTree paths_;
  std::vector<PlannedRecord>& out_;
  const RecordSchema* trace_metadata_;
  const RecordSchema* before_;
  const RecordSchema* after_;
  const RecordSchema* failed_;
  const RecordSchema* database_;
  const RecordSchema* http_;
  const RecordSchema* exception_;
  const RecordSchema* log_;
  const RecordSchema* remote_;
  std::unordered_set<int64_t> used_ids_;
  std::unordered_set<int64_t> reached_;  // sub-trace ids reached inline from this sub-trace
  int64_t trace_id_ = 0;
  int32_t order_ = 0;
  int64_t cursor_ = 0;  // latest time seen: the entry time of a callable without one
};

}  // namespace

TraceConverter::TraceConverter(StringPool& pool)
    : pool_(pool), next_synthetic_id_(kSyntheticIdBase) {}

bool TraceConverter::convert(const Json& trace, const std::string& path,
                             std::vector<PlannedRecord>& out, std::string* error) {
  out.clear();
  Conversion conversion(pool_, notes_, next_synthetic_id_, path, out);
  try {
    conversion.run(trace);
  } catch (const ConversionError& e) {
    *error = conversion.path_text(e.seg) + ": " + e.reason;
    out.clear();
    return false;
  }
  return true;
}

}  // namespace sonde::format::openxtrace
