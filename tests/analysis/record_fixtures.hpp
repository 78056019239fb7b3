// Builds Kieker-shaped records in code and collects the traces a
// TraceReconstructor hands on, so reconstruction tests read like the logs
// they stand for.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "format/record.hpp"
#include "format/schema.hpp"

namespace sonde::analysis::testing {

class RecordFeeder {
 public:
  explicit RecordFeeder(format::RecordSink& sink) : sink_(sink) {}

  void metadata(int64_t trace, const std::string& host = "host", int64_t thread = 1) {
    format::Record r = make(format::kieker_class::kTraceMetadata);
    r.values = {trace, thread, str("<no-session-id>"), str(host), trace, int64_t{-1}};
    sink_.on_record(r);
  }
  void before(int64_t trace, int32_t order, int64_t ts, const std::string& op,
              const std::string& cls = "C") {
    event(format::kieker_class::kBeforeOperation, trace, order, ts, op, cls);
  }
  void after(int64_t trace, int32_t order, int64_t ts, const std::string& op,
             const std::string& cls = "C") {
    event(format::kieker_class::kAfterOperation, trace, order, ts, op, cls);
  }
  void failed(int64_t trace, int32_t order, int64_t ts, const std::string& op,
              const std::string& cause, const std::string& cls = "C") {
    format::Record r = make(format::kieker_class::kAfterOperationFailed);
    r.values = {ts, trace, int64_t{order}, str(op), str(cls), str(cause)};
    sink_.on_record(r);
  }
  // A CallOperationEvent (CallConstructorEvent with `constructor`): the
  // caller calls the callee.
  void call(int64_t trace, int32_t order, int64_t ts, const std::string& caller,
            const std::string& callee, const std::string& caller_cls = "C",
            const std::string& callee_cls = "C", bool constructor = false) {
    format::Record r = make(constructor ? "kieker.common.record.flow.trace.operation.constructor."
                                          "CallConstructorEvent"
                                        : format::kieker_class::kCallOperation);
    r.values = {ts,          trace,          int64_t{order}, str(caller), str(caller_cls),
                str(callee), str(callee_cls)};
    sink_.on_record(r);
  }
  void before_constructor(int64_t trace, int32_t order, int64_t ts, const std::string& op,
                          const std::string& cls = "C") {
    event("kieker.common.record.flow.trace.operation.constructor.BeforeConstructorEvent", trace,
          order, ts, op, cls);
  }
  void after_constructor(int64_t trace, int32_t order, int64_t ts, const std::string& op,
                         const std::string& cls = "C") {
    event("kieker.common.record.flow.trace.operation.constructor.AfterConstructorEvent", trace,
          order, ts, op, cls);
  }
  // A SplitEvent: takes an order index and nothing else.
  void split(int64_t trace, int32_t order, int64_t ts) {
    format::Record r = make("kieker.common.record.flow.trace.concurrency.SplitEvent");
    r.values = {ts, trace, int64_t{order}};
    sink_.on_record(r);
  }
  void execution(int64_t trace, const std::string& op, int64_t tin, int64_t tout, int32_t eoi,
                 int32_t ess, const std::string& host = "host") {
    format::Record r = make(format::kieker_class::kOperationExecution);
    r.values = {str(op), str("N/A"), trace, tin, tout, str(host), int64_t{eoi}, int64_t{ess}};
    sink_.on_record(r);
  }
  // A record trace analysis does not use.
  void cpu(int64_t ts) {
    const format::RecordSchema* s =
        format::find_builtin_schema(format::kieker_class::kCpuUtilization);
    if (s == nullptr) return;
    format::Record r;
    format::reset_to_defaults(r, s);
    r.logging_timestamp = ts;
    sink_.on_record(r);
  }

 private:
  format::Record make(std::string_view class_name) {
    format::Record r;
    r.schema = format::find_builtin_schema(class_name);
    EXPECT_NE(r.schema, nullptr) << class_name;
    return r;
  }
  void event(std::string_view cls_name, int64_t trace, int32_t order, int64_t ts,
             const std::string& op, const std::string& cls) {
    format::Record r = make(cls_name);
    r.values = {ts, trace, int64_t{order}, str(op), str(cls)};
    sink_.on_record(r);
  }
  // Record strings are views: keep their text alive until the test ends, as
  // a reader's string pool would (the reconstructor copies what it keeps).
  std::string_view str(const std::string& s) { return storage_.emplace_back(s); }

  format::RecordSink& sink_;
  std::deque<std::string> storage_;
};

// Keeps every trace it is given. Views in the traces point into the
// reconstructor's string pool, so keep the reconstructor alive as well.
class CollectingSink : public TraceSink {
 public:
  void on_trace(const Trace& trace) override { valid.push_back(trace); }
  void on_invalid_trace(const InvalidTrace& trace) override { invalid.push_back(trace); }

  std::vector<Trace> valid;
  std::vector<InvalidTrace> invalid;
};

// A reconstructor fed by hand (`feed`), keeping every trace it hands on.
struct FedReconstructor {
  explicit FedReconstructor(ReconstructionOptions options = {}) : rec(sink, options), feed(rec) {}
  CollectingSink sink;
  TraceReconstructor rec;
  RecordFeeder feed;
};

// The one invalid trace a test expects (and no valid one).
inline const InvalidTrace& only_invalid(const CollectingSink& sink) {
  EXPECT_TRUE(sink.valid.empty());
  EXPECT_EQ(sink.invalid.size(), 1u);
  return sink.invalid.at(0);
}

// "op@eoi,ess" for each execution, for compact expectations.
inline std::vector<std::string> shape(const Trace& t) {
  std::vector<std::string> out;
  for (const Execution& e : t.executions) {
    out.push_back(std::string(e.operation) + "@" + std::to_string(e.eoi) + "," +
                  std::to_string(e.ess));
  }
  return out;
}

}  // namespace sonde::analysis::testing
