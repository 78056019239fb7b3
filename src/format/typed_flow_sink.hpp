// The typed fast path for Kieker flow records. A native log's thread events
// become TraceMetadata / Before / After / AfterFailed records; a consumer
// that only needs their fields (trace reconstruction) can take them through
// this interface instead of as generic Records, which skips building a
// variant per field, looking up the schema and interning the operation name
// per event. Everything else (metadata, sampler records) still arrives as
// Records through RecordSink::on_record.
#pragma once

#include <cstdint>
#include <string_view>

#include "format/w3c_ids.hpp"

namespace sonde::format {

struct TypedTraceStart {
  int64_t timestamp = 0;  // the TraceMetadata's logging timestamp
  int64_t trace_id = -1;
  int64_t thread_id = -1;
  std::string_view session;
  std::string_view host;
  int64_t parent_trace_id = -1;  // == trace_id for a root trace
  int32_t parent_order_id = -1;  // -1 for a root trace
  w3c::Context w3c;              // the W3C trace it continued, if sonde did not start it
};

enum class TypedFlowKind : uint8_t { kBefore, kAfter, kAfterFailed };

struct TypedOperationEvent {
  TypedFlowKind kind = TypedFlowKind::kBefore;
  int64_t timestamp = 0;
  int64_t trace_id = -1;
  int64_t order_index = 0;
  uint32_t operation = 0;  // id given to on_operation() for the current source
  std::string_view cause;  // kAfterFailed only
};

class TypedFlowSink {
 public:
  virtual ~TypedFlowSink() = default;
  // A new source (file) begins: operation ids from before are void.
  virtual void on_source_begin() = 0;
  // Defines an operation id of the current source. An id without a
  // definition means "<unknown>" with an empty class signature.
  virtual void on_operation(uint32_t id, std::string_view signature,
                            std::string_view component) = 0;
  // Each returns false to stop reading, as RecordSink::on_record.
  virtual bool on_trace_start(const TypedTraceStart& start) = 0;
  virtual bool on_operation_event(const TypedOperationEvent& event) = 0;
};

}  // namespace sonde::format
