// OPEN.xtrace's JSON from stitched traces (docs/formats/openxtrace.md).
// Over 500 lines: one TraceWriter maps a trace's parts, sub-traces and
// callables onto the format's nested objects; its steps share the ids it
// hands out.
#include "analysis/export/openxtrace_writer.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/export/openxtrace_method_names.hpp"
#include "analysis/model/execution_lookup.hpp"
#include "format/callable_schemas.hpp"

namespace sonde::analysis {
namespace {

namespace cc = format::callable_class;

constexpr std::string_view kCore = "org.spec.research.open.xtrace.api.core.";
constexpr std::string_view kCallables = "org.spec.research.open.xtrace.api.core.callables.";

// A JSON string; invalid UTF-8 (e.g. in an exception message) becomes U+FFFD.
std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
std::string json_string_or_null(std::string_view s) { return s.empty() ? "null" : json_string(s); }

int64_t floor_millis(int64_t ns) {
  return ns >= 0 ? ns / 1'000'000 : -((-ns + 999'999) / 1'000'000);
}

// Something placed among an execution's callees besides its child executions.
struct Extra {
  enum class Kind : uint8_t { kRecord, kPart } kind;
  size_t index;  // into the part's records, or into StitchedTrace::parts
  int64_t key;   // order among the callees (see PartPlan)
  int64_t time;
  size_t seq;
};

// Where everything of one part goes. Callees of an execution are ordered
// by key: with order indexes, a child execution opened by event k has key
// 2k-1 and something that happened after event k has key 2k; without
// (OperationExecutionRecords), keys are times.
struct PartPlan {
  std::vector<OwnedRecord> records;
  std::unordered_map<int32_t, std::vector<Extra>> extras;  // by execution, sorted
  std::unordered_map<int32_t, size_t> http;                // execution -> HttpRequest record
  std::unordered_set<int32_t> propagated;  // executions with a propagated ExceptionThrow record
  std::unordered_map<int64_t, size_t> remote_by_target;  // target trace id -> RemoteCall record
  bool by_order = false;
};

class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const StitchedTrace& st, CallableRecordBuffer& callables,
              OpenXtraceWriterStats& stats)
      : out_(out), st_(st), stats_(stats) {
    plans_.resize(st.parts.size());
    for (size_t i = 0; i < st.parts.size(); ++i) {
      plans_[i].records = callables.take(st.parts[i].trace.trace_id);
      lookups_.emplace_back(st.parts[i].trace);
    }
    for (size_t i = 0; i < st.parts.size(); ++i) plan(i);
  }

  void write() {
    const Trace& root = st_.parts[0].trace;
    out_ << "{\"@class\":" << json_string(std::string(kCore) + "Trace")
         << ",\"traceId\":" << root.trace_id << ",\"identifier\":null"
         << ",\"responseTime\":" << duration_of(0) << ",\"exclusiveTime\":" << exclusive_of_part(0)
         << ",\"rootOfTrace\":";
    push_part(0);
    run();
    out_ << "}";
    ++stats_.traces;
  }

 private:
  struct Frame {
    enum class Type : uint8_t { kPart, kExecution, kRemote } type;
    int32_t part = 0;
    int32_t exec = 0;
    int32_t next_child = 0;  // scan position for the next direct child execution
    size_t next_extra = 0;
    int64_t callee_time = 0;  // sum of the timed callees' response times
    bool first = true;
  };

  const std::vector<Execution>& executions(size_t part) const {
    return st_.parts[part].trace.executions;
  }
  int64_t duration_of(size_t part) const {
    const std::vector<Execution>& xs = executions(part);
    return xs.empty() ? 0 : xs.front().duration();
  }
  int64_t exclusive_of_part(size_t part) const {
    int64_t d = duration_of(part);
    for (size_t j = 0; j < st_.parts.size(); ++j) {
      if (st_.parts[j].parent == static_cast<int32_t>(part)) d -= duration_of(j);
    }
    return d;
  }

  // Key of something that happened after event `order_index` (or at `time`
  // when that names nothing) and the execution it belongs to.
  bool place(size_t part, int32_t order_index, int64_t time, int32_t* exec, int64_t* key) const {
    const ExecutionLookup& lookup = lookups_[part];
    const PartPlan& p = plans_[part];
    if (p.by_order && order_index >= 0) {
      *exec = lookup.current_at_order_index(order_index);
      if (*exec >= 0) {
        *key = 2 * int64_t{order_index};
        return true;
      }
    }
    *exec = lookup.innermost_at_time(time);
    if (*exec < 0) return false;
    if (!p.by_order) {
      *key = time;
      return true;
    }
    // After the last direct child that had returned by then.
    const std::vector<Execution>& xs = executions(part);
    const Execution& e = xs[static_cast<size_t>(*exec)];
    int64_t position = e.order_index;
    for (size_t c = static_cast<size_t>(*exec) + 1; c < xs.size() && xs[c].ess > e.ess; ++c) {
      if (xs[c].ess == e.ess + 1 && xs[c].tout <= time && xs[c].exit_order_index >= 0) {
        position = xs[c].exit_order_index;
      }
    }
    *key = 2 * position;
    return true;
  }

  void plan(size_t part) {
    PartPlan& p = plans_[part];
    p.by_order = lookups_[part].has_order_indexes();
    size_t seq = 0;
    for (size_t r = 0; r < p.records.size(); ++r) {
      const OwnedRecord& rec = p.records[r];
      const std::string& cls = rec.schema->class_name;
      if (cls == cc::kRemoteCall) {
        const int64_t target = rec.i64(format::remote_field::kTargetTraceId);
        if (target >= 0 && is_child_part(part, target)) {
          p.remote_by_target.emplace(target, r);
          continue;  // written with the part it leads to
        }
      }
      int32_t exec = -1;
      int64_t key = 0;
      if (!place(part, rec.order_index(), rec.timestamp(), &exec, &key)) {
        ++stats_.callable_records_dropped;
        continue;
      }
      if (cls == cc::kHttpRequest) {
        p.http.emplace(exec, r);
        ++stats_.callable_records_written;
        continue;
      }
      if (cls == cc::kExceptionThrow && rec.flag(format::exception_field::kPropagated)) {
        p.propagated.insert(exec);
      }
      p.extras[exec].push_back({Extra::Kind::kRecord, r, key, rec.timestamp(), seq++});
    }
    for (size_t j = 0; j < st_.parts.size(); ++j) {
      const SubTrace& child = st_.parts[j];
      if (child.parent != static_cast<int32_t>(part) || child.trace.executions.empty()) continue;
      int32_t exec = -1;
      int64_t key = 0;
      const int32_t order = child.parent_execution >= 0 ? child.trace.parent_order_id : -1;
      if (!place(part, order, child.trace.start_time(), &exec, &key)) continue;
      p.extras[exec].push_back({Extra::Kind::kPart, j, key, child.trace.start_time(), seq++});
    }
    for (auto& [exec, list] : p.extras) {
      std::sort(list.begin(), list.end(), [](const Extra& a, const Extra& b) {
        if (a.key != b.key) return a.key < b.key;
        if (a.time != b.time) return a.time < b.time;
        return a.seq < b.seq;
      });
    }
  }

  bool is_child_part(size_t part, int64_t trace_id) const {
    for (const SubTrace& s : st_.parts) {
      if (s.parent == static_cast<int32_t>(part) && s.trace.trace_id == trace_id) return true;
    }
    return false;
  }

  void push_part(size_t part) {
    const SubTrace& s = st_.parts[part];
    out_ << "{\"@class\":" << json_string(std::string(kCore) + "SubTrace")
         << ",\"subTraceId\":" << s.trace.trace_id << ",\"identifier\":null"
         << ",\"host\":" << json_string_or_null(s.trace.host)
         << ",\"port\":-1,\"runtimeEnvironment\":null,\"application\":null"
         << ",\"businessTransaction\":null,\"serverName\":null,\"nodeType\":null"
         << ",\"responseTime\":" << duration_of(part)
         << ",\"exclusiveTime\":" << exclusive_of_part(part)
         << ",\"subTraces\":[],\"rootOfSubTrace\":";
    ++stats_.sub_traces;
    stack_.push_back({Frame::Type::kPart, static_cast<int32_t>(part)});
    push_execution(part, 0);
  }

  void timed_fields(int64_t tin, int64_t duration, int64_t thread) {
    out_ << ",\"timeStamp\":" << floor_millis(tin)
         << ",\"exitTime\":" << (duration >= 0 ? floor_millis(tin + duration) : -1)
         << ",\"responseTime\":" << duration << ",\"threadID\":" << thread
         << ",\"threadName\":null,\"identifier\":null,\"labels\":null"
         << ",\"additionalInformation.sonde.timestampNanos\":" << tin;
  }

  void push_execution(size_t part, int32_t exec) {
    const SubTrace& s = st_.parts[part];
    const Execution& x = executions(part)[static_cast<size_t>(exec)];
    const PartPlan& p = plans_[part];
    auto http = p.http.find(exec);
    const bool is_http = http != p.http.end();
    out_ << "{\"@class\":"
         << json_string(std::string(kCallables) +
                        (is_http ? "HTTPRequestProcessing" : "MethodInvocation"));
    timed_fields(x.tin, x.duration(), s.trace.thread_id);
    if (exec == 0) part_root_information(part);
    if (is_http) {
      http_fields(p.records[http->second], x);
    } else {
      method_fields(x);
    }
    out_ << ",\"children\":[";
    ++stats_.callables;
    Frame f{Frame::Type::kExecution, static_cast<int32_t>(part), exec};
    f.next_child = exec + 1;
    stack_.push_back(f);
  }

  // What a sub-trace's root callable carries for sonde beyond the format.
  void part_root_information(size_t part) {
    const Trace& t = st_.parts[part].trace;
    if (part == 0 && t.parent_trace_id >= 0 && t.parent_trace_id != t.trace_id) {
      // An orphan: its parent is in no trace of this file.
      out_ << ",\"additionalInformation.sonde.parentTraceId\":" << t.parent_trace_id
           << ",\"additionalInformation.sonde.parentOrderId\":" << t.parent_order_id;
    }
    if (!t.session.empty() && t.session != "<no-session-id>") {
      out_ << ",\"additionalInformation.sonde.sessionId\":" << json_string(t.session);
    }
  }

  void method_fields(const Execution& x) {
    const MethodNames n = method_names(x.operation, x.component);
    std::string joined = n.package_name;
    if (!n.class_name.empty()) joined += (joined.empty() ? "" : ".") + n.class_name;
    if (joined != x.component) {
      out_ << ",\"additionalInformation.sonde.component\":" << json_string(x.component);
    }
    out_ << ",\"signature\":" << json_string(x.operation)
         << ",\"methodName\":" << json_string_or_null(n.method_name)
         << ",\"className\":" << json_string_or_null(n.class_name)
         << ",\"packageName\":" << json_string_or_null(n.package_name)
         << ",\"returnType\":" << json_string_or_null(n.return_type)
         << ",\"returnValue\":null,\"parameterValues\":null,\"parameterTypes\":";
    if (n.has_parameter_list) {
      out_ << "[";
      for (size_t i = 0; i < n.parameter_types.size(); ++i) {
        out_ << (i ? "," : "") << json_string(n.parameter_types[i]);
      }
      out_ << "]";
    } else {
      out_ << "null";
    }
    out_ << ",\"CPUTime\":-1,\"exclusiveCPUTime\":-1,\"GCTime\":-1,\"exclusiveGCTime\":-1"
         << ",\"syncTime\":-1,\"exclusiveSyncTime\":-1,\"exclusiveWaitTime\":-1";
  }

  // A flattened [k1, v1, k2, v2...] map as a JSON object; `multi` groups
  // repeated keys into arrays (HTTP parameters are String[] per name).
  std::string map_object(const std::vector<std::string>& flat, bool multi) {
    if (flat.size() < 2) return "null";
    std::map<std::string, std::vector<std::string>> grouped;
    for (size_t i = 0; i + 1 < flat.size(); i += 2) grouped[flat[i]].push_back(flat[i + 1]);
    std::string s = "{";
    for (const auto& [k, values] : grouped) {
      s += (s.size() > 1 ? "," : "") + json_string(k) + ":";
      if (multi) {
        s += "[";
        for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + json_string(values[i]);
        s += "]";
      } else {
        s += json_string(values.back());
      }
    }
    return s + "}";
  }

  void http_fields(const OwnedRecord& r, const Execution& x) {
    namespace f = format::http_field;
    static const std::unordered_set<std::string> kMethods = {
        "GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"};
    const std::string& method = r.str(f::kMethod);
    out_ << ",\"additionalInformation.sonde.signature\":" << json_string(x.operation)
         << ",\"additionalInformation.sonde.component\":" << json_string(x.component)
         << ",\"uri\":" << json_string_or_null(r.str(f::kUri)) << ",\"requestMethod\":"
         << (method.empty() ? "null" : json_string(kMethods.count(method) ? method : "UNKNOWN"))
         << ",\"responseCode\":" << r.i64(f::kResponseCode)
         << ",\"HTTPHeaders\":" << map_object(r.list(f::kRequestHeaders), false)
         << ",\"HTTPParameters\":" << map_object(r.list(f::kParameters), true)
         << ",\"HTTPAttributes\":" << map_object(r.list(f::kAttributes), false)
         << ",\"HTTPSessionAttributes\":" << map_object(r.list(f::kSessionAttributes), false)
         << ",\"responseHTTPHeaders\":" << map_object(r.list(f::kResponseHeaders), false)
         << ",\"body\":" << json_string_or_null(r.str(f::kBody));
    if (!method.empty() && !kMethods.count(method)) {
      out_ << ",\"additionalInformation.sonde.requestMethod\":" << json_string(method);
    }
  }

  void run() {
    while (!stack_.empty()) {
      const size_t top = stack_.size() - 1;
      if (stack_[top].type != Frame::Type::kExecution) {
        out_ << "}";  // the sub-trace, or the RemoteInvocation around it
        stack_.pop_back();
        continue;
      }
      step_execution(top);
    }
  }

  void step_execution(size_t top) {
    Frame& f = stack_[top];
    const size_t part = static_cast<size_t>(f.part);
    const std::vector<Execution>& xs = executions(part);
    const Execution& x = xs[static_cast<size_t>(f.exec)];
    const PartPlan& p = plans_[part];
    const std::vector<Extra>* extras = nullptr;
    if (auto it = p.extras.find(f.exec); it != p.extras.end()) extras = &it->second;

    const bool child_left = static_cast<size_t>(f.next_child) < xs.size() &&
                            xs[static_cast<size_t>(f.next_child)].ess > x.ess;
    const bool extra_left = extras != nullptr && f.next_extra < extras->size();
    if (!child_left && !extra_left) {
      close_execution(top);
      return;
    }
    bool take_child = child_left;
    if (child_left && extra_left) {
      const Execution& c = xs[static_cast<size_t>(f.next_child)];
      const int64_t child_key = p.by_order ? 2 * int64_t{c.order_index} - 1 : c.tin;
      take_child = child_key <= (*extras)[f.next_extra].key;
    }
    if (!f.first) out_ << ",";
    f.first = false;
    if (take_child) {
      push_execution(part, f.next_child);
      return;
    }
    const Extra e = (*extras)[f.next_extra++];
    if (e.kind == Extra::Kind::kPart) {
      f.callee_time += duration_of(e.index);
      push_remote(part, e.index);
    } else {
      const int64_t d = write_record(p.records[e.index], st_.parts[part].trace.thread_id);
      if (d > 0) f.callee_time += d;
    }
  }

  void close_execution(size_t top) {
    Frame f = stack_[top];
    const size_t part = static_cast<size_t>(f.part);
    const Execution& x = executions(part)[static_cast<size_t>(f.exec)];
    if (x.failed && plans_[part].propagated.count(f.exec) == 0) {
      // The exception that ended the execution, as its last callee.
      if (!f.first) out_ << ",";
      out_ << "{\"@class\":" << json_string(std::string(kCallables) + "ExceptionThrow")
           << ",\"timeStamp\":" << floor_millis(x.tout)
           << ",\"threadID\":" << st_.parts[part].trace.thread_id
           << ",\"threadName\":null,\"identifier\":null,\"labels\":null"
           << ",\"additionalInformation.sonde.timestampNanos\":" << x.tout
           << ",\"additionalInformation.sonde.propagated\":true"
           << ",\"errorMessage\":" << json_string(x.cause)
           << ",\"throwableType\":null,\"cause\":null,\"stackTrace\":null}";
      ++stats_.callables;
    }
    out_ << "],\"exclusiveTime\":" << x.duration() - f.callee_time << "}";
    stack_.pop_back();
    if (!stack_.empty() && stack_.back().type == Frame::Type::kExecution) {
      // The parent continues after this execution's subtree.
      Frame& parent = stack_.back();
      const std::vector<Execution>& xs = executions(part);
      int32_t end = f.next_child;
      while (static_cast<size_t>(end) < xs.size() && xs[static_cast<size_t>(end)].ess > x.ess) {
        ++end;
      }
      parent.next_child = end;
      parent.callee_time += x.duration();
    }
  }

  void push_remote(size_t part, size_t child) {
    const SubTrace& target = st_.parts[child];
    const PartPlan& p = plans_[part];
    int64_t tin = target.trace.start_time();
    int64_t d = duration_of(child);
    std::string where = std::string(target.trace.host);
    if (auto it = p.remote_by_target.find(target.trace.trace_id); it != p.remote_by_target.end()) {
      // The caller's own view of the call, as read from OPEN.xtrace.
      const OwnedRecord& r = p.records[it->second];
      tin = r.timestamp();
      d = r.i64(format::remote_field::kDuration);
      where = r.str(format::remote_field::kTarget);
      ++stats_.callable_records_written;
    }
    out_ << "{\"@class\":" << json_string(std::string(kCallables) + "RemoteInvocation");
    timed_fields(tin, d, st_.parts[part].trace.thread_id);
    out_ << ",\"exclusiveTime\":" << d << ",\"target\":" << json_string_or_null(where)
         << ",\"targetSubTrace\":";
    ++stats_.callables;
    stack_.push_back({Frame::Type::kRemote, static_cast<int32_t>(child)});
    push_part(child);
  }

  // Writes a callee from a callable record; returns its duration (-1 if untimed).
  int64_t write_record(const OwnedRecord& r, int64_t thread) {
    const std::string& cls = r.schema->class_name;
    const int64_t t = r.timestamp();
    ++stats_.callables;
    ++stats_.callable_records_written;
    if (cls == cc::kDatabaseCall) {
      namespace f = format::db_field;
      const int64_t d = r.i64(f::kDuration);
      out_ << "{\"@class\":" << json_string(std::string(kCallables) + "DatabaseInvocation");
      timed_fields(t, d, thread);
      out_ << ",\"exclusiveTime\":" << d
           << ",\"SQLStatement\":" << json_string_or_null(r.str(f::kSqlStatement))
           << ",\"prepared\":" << (r.flag(f::kPrepared) ? "true" : "false")
           << ",\"boundSQLStatement\":" << json_string_or_null(r.str(f::kBoundSqlStatement))
           << ",\"unboundSQLStatement\":" << json_string_or_null(r.str(f::kUnboundSqlStatement))
           << ",\"parameterBindings\":";
      const std::vector<std::string>& bindings = r.list(f::kParameterBindings);
      if (bindings.empty()) {
        out_ << "null";
      } else {
        out_ << "{";
        for (size_t i = 0; i < bindings.size(); ++i) {
          out_ << (i ? "," : "") << "\"" << i + 1 << "\":" << json_string(bindings[i]);
        }
        out_ << "}";
      }
      out_ << ",\"dbProductName\":" << json_string_or_null(r.str(f::kDbProductName))
           << ",\"dbProductVersion\":" << json_string_or_null(r.str(f::kDbProductVersion))
           << ",\"dbURL\":" << json_string_or_null(r.str(f::kDbUrl)) << "}";
      return d;
    }
    if (cls == cc::kRemoteCall) {
      // A call whose target is not in this trace (not monitored, or not read).
      const int64_t d = r.i64(format::remote_field::kDuration);
      out_ << "{\"@class\":" << json_string(std::string(kCallables) + "RemoteInvocation");
      timed_fields(t, d, thread);
      out_ << ",\"exclusiveTime\":" << d
           << ",\"target\":" << json_string_or_null(r.str(format::remote_field::kTarget))
           << ",\"targetSubTrace\":null}";
      return d;
    }
    out_ << "{\"@class\":";
    if (cls == cc::kLogMessage) {
      out_ << json_string(std::string(kCallables) + "LoggingInvocation");
    } else {
      out_ << json_string(std::string(kCallables) + "ExceptionThrow");
    }
    out_ << ",\"timeStamp\":" << floor_millis(t) << ",\"threadID\":" << thread
         << ",\"threadName\":null,\"identifier\":null,\"labels\":null"
         << ",\"additionalInformation.sonde.timestampNanos\":" << t;
    if (cls == cc::kLogMessage) {
      out_ << ",\"loggingLevel\":" << json_string_or_null(r.str(format::log_field::kLevel))
           << ",\"message\":" << json_string(r.str(format::log_field::kMessage)) << "}";
      return -1;
    }
    namespace f = format::exception_field;
    if (r.flag(f::kPropagated)) out_ << ",\"additionalInformation.sonde.propagated\":true";
    out_ << ",\"errorMessage\":" << json_string(r.str(f::kErrorMessage))
         << ",\"throwableType\":" << json_string_or_null(r.str(f::kThrowableType))
         << ",\"cause\":" << json_string_or_null(r.str(f::kCause))
         << ",\"stackTrace\":" << json_string_or_null(r.str(f::kStackTrace)) << "}";
    return -1;
  }

  std::ostream& out_;
  const StitchedTrace& st_;
  OpenXtraceWriterStats& stats_;
  std::vector<PartPlan> plans_;
  std::vector<ExecutionLookup> lookups_;
  std::vector<Frame> stack_;
};

}  // namespace

OpenXtraceWriter::OpenXtraceWriter(std::ostream& out, OpenXtraceWriterOptions options)
    : out_(out), callables_(options.max_pending_callable_records) {}

void OpenXtraceWriter::on_stitched_trace(const StitchedTrace& trace) {
  if (finished_ || trace.parts.empty() || trace.parts[0].trace.executions.empty()) return;
  out_ << (stats_.traces == 0 ? "[\n" : ",\n");
  TraceWriter(out_, trace, callables_, stats_).write();
}

void OpenXtraceWriter::finish() {
  if (finished_) return;
  finished_ = true;
  out_ << (stats_.traces == 0 ? "[]\n" : "\n]\n");
  out_.flush();
  stats_.callable_records_dropped += callables_.dropped() + callables_.pending();
}

}  // namespace sonde::analysis
