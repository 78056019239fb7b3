// Field lists of every record type sonde knows by name, in Kieker's
// serialization order (anchor-kieker-moobench.md §1.3). Kieker types keep
// their Java class names so that Kieker's own readers accept sonde's logs.
#include "format/builtin_schemas.hpp"

#include <array>

namespace sonde::format {
namespace {

using T = FieldType;

std::vector<FieldSpec> operation_event_fields() {
  return {{"timestamp", T::kInt64},
          {"traceId", T::kInt64},
          {"orderIndex", T::kInt32},
          {"operationSignature", T::kString},
          {"classSignature", T::kString}};
}

std::vector<FieldSpec> with(std::vector<FieldSpec> base, std::vector<FieldSpec> extra) {
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

// Built on first use (probes can start from a library constructor, before
// this file's static initialisers run) and never destroyed (the writer
// thread may still use them while static destructors run at exit).
std::span<const RecordSchema* const> core_schemas() {
  static const RecordSchema& kKiekerMetadata =
      *new RecordSchema{std::string(kieker_class::kMetadata),
                        {{"version", T::kString},
                         {"controllerName", T::kString},
                         {"hostname", T::kString},
                         {"experimentId", T::kInt32},
                         {"debugMode", T::kBool},
                         {"timeOffset", T::kInt64},
                         {"timeUnit", T::kString},
                         {"numberOfRecords", T::kInt64}}};

  static const RecordSchema& kTraceMetadata =
      *new RecordSchema{std::string(kieker_class::kTraceMetadata),
                        {{"traceId", T::kInt64},
                         {"threadId", T::kInt64},
                         {"sessionId", T::kString},
                         {"hostname", T::kString},
                         {"parentTraceId", T::kInt64},
                         {"parentOrderId", T::kInt32}}};

  static const RecordSchema& kApplicationTraceMetadata =
      *new RecordSchema{"kieker.common.record.flow.trace.ApplicationTraceMetadata",
                        {{"traceId", T::kInt64},
                         {"threadId", T::kInt64},
                         {"sessionId", T::kString},
                         {"hostname", T::kString},
                         {"parentTraceId", T::kInt64},
                         {"parentOrderId", T::kInt32},
                         {"applicationName", T::kString}}};

  static const RecordSchema& kBeforeOperation =
      *new RecordSchema{std::string(kieker_class::kBeforeOperation), operation_event_fields()};
  static const RecordSchema& kAfterOperation =
      *new RecordSchema{std::string(kieker_class::kAfterOperation), operation_event_fields()};
  static const RecordSchema& kAfterOperationFailed =
      *new RecordSchema{std::string(kieker_class::kAfterOperationFailed),
                        with(operation_event_fields(), {{"cause", T::kString}})};
  static const RecordSchema& kCallOperation = *new RecordSchema{
      std::string(kieker_class::kCallOperation),
      with(operation_event_fields(),
           {{"calleeOperationSignature", T::kString}, {"calleeClassSignature", T::kString}})};

  static const RecordSchema& kOperationExecution =
      *new RecordSchema{std::string(kieker_class::kOperationExecution),
                        {{"operationSignature", T::kString},
                         {"sessionId", T::kString},
                         {"traceId", T::kInt64},
                         {"tin", T::kInt64},
                         {"tout", T::kInt64},
                         {"hostname", T::kString},
                         {"eoi", T::kInt32},
                         {"ess", T::kInt32}}};

  static const std::array<const RecordSchema*, 8> kCore = {
      &kKiekerMetadata,  &kTraceMetadata,     &kApplicationTraceMetadata,
      &kBeforeOperation, &kAfterOperation,    &kAfterOperationFailed,
      &kCallOperation,   &kOperationExecution};
  return kCore;
}

}  // namespace

std::span<const RecordSchema* const> builtin_schemas() {
  static const std::vector<const RecordSchema*>& all = *new std::vector<const RecordSchema*>([] {
    std::span<const RecordSchema* const> core = core_schemas();
    std::vector<const RecordSchema*> v(core.begin(), core.end());
    for (const RecordSchema* s : kieker_extra_schemas()) v.push_back(s);
    for (const RecordSchema* s : system_schemas()) v.push_back(s);
    for (const RecordSchema* s : callable_schemas()) v.push_back(s);
    for (const RecordSchema* s : diagnostic_schemas()) v.push_back(s);
    return v;
  }());
  return all;
}

}  // namespace sonde::format
