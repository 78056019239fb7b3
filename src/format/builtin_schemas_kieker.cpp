// Kieker record types beyond the core flow records, with field names, types
// and order taken from the serialize() methods of Kieker's generated classes
// (common/src-gen/kieker/common/record/**, IRL in common/model/records/**).
// A wrong order here silently misreads every .bin file, so each list below
// was checked against the generated serializer, not only against the IRL.
#include <vector>

#include "format/builtin_schemas.hpp"

namespace sonde::format {
namespace {

using T = FieldType;
using Fields = std::vector<FieldSpec>;

Fields operator+(Fields a, const Fields& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Fields doubles(std::initializer_list<const char*> names) {
  Fields f;
  for (const char* n : names) f.push_back({n, T::kDouble});
  return f;
}

// Built on first use rather than at namespace scope so that a lookup made
// during another file's static initialisation cannot see an empty table.
std::vector<RecordSchema> make_schemas() {
  const Fields kTraceEvent = {
      {"timestamp", T::kInt64}, {"traceId", T::kInt64}, {"orderIndex", T::kInt32}};
  const Fields kOperation =
      kTraceEvent + Fields{{"operationSignature", T::kString}, {"classSignature", T::kString}};
  const Fields kCall = kOperation + Fields{{"calleeOperationSignature", T::kString},
                                           {"calleeClassSignature", T::kString}};
  const Fields kCause = {{"cause", T::kString}};
  const Fields kObject = {{"objectId", T::kInt32}};
  const Fields kCallObject = {{"objectId", T::kInt32}, {"calleeObjectId", T::kInt32}};
  const Fields kInterface = {{"interface", T::kString}};
  const Fields kPayload = {
      {"parameters", T::kStringArray}, {"values", T::kStringArray}, {"requestType", T::kInt32}};
  const Fields kThreadEvent = {{"timestamp", T::kInt64},
                               {"threadId", T::kInt64},
                               {"orderIndex", T::kInt32},
                               {"operationSignature", T::kString},
                               {"classSignature", T::kString}};
  const Fields kHost = {{"timestamp", T::kInt64}, {"hostname", T::kString}};

  const std::string kFlow = "kieker.common.record.flow.";
  const std::string kOp = kFlow + "trace.operation.";
  const std::string kCtor = kOp + "constructor.";
  const std::string kSystem = "kieker.common.record.system.";

  return {
      // Operation events with object identity (flow.trace.operation.object).
      {kOp + "object.BeforeOperationObjectEvent", kOperation + kObject},
      {kOp + "object.AfterOperationObjectEvent", kOperation + kObject},
      {kOp + "object.AfterOperationFailedObjectEvent", kOperation + kCause + kObject},
      {kOp + "object.CallOperationObjectEvent", kCall + kCallObject},
      {kOp + "object.BeforeOperationObjectInterfaceEvent", kOperation + kObject + kInterface},
      {kOp + "object.EntryLevelBeforeOperationObjectEvent", kOperation + kObject + kPayload},
      {kOp + "EntryLevelBeforeOperationEvent", kOperation + kPayload},

      // Constructor events share the operation layouts.
      {kCtor + "BeforeConstructorEvent", kOperation},
      {kCtor + "AfterConstructorEvent", kOperation},
      {kCtor + "AfterConstructorFailedEvent", kOperation + kCause},
      {kCtor + "CallConstructorEvent", kCall},
      {kCtor + "object.BeforeConstructorObjectEvent", kOperation + kObject},
      {kCtor + "object.AfterConstructorObjectEvent", kOperation + kObject},
      {kCtor + "object.AfterConstructorFailedObjectEvent", kOperation + kCause + kObject},
      {kCtor + "object.CallConstructorObjectEvent", kCall + kCallObject},
      {kCtor + "object.BeforeConstructorObjectInterfaceEvent", kOperation + kObject + kInterface},

      {kFlow + "trace.ConstructionEvent",
       kTraceEvent + Fields{{"classSignature", T::kString}, {"objectId", T::kInt32}}},
      {kFlow + "trace.concurrency.SplitEvent", kTraceEvent},
      {kFlow + "trace.concurrency.JoinEvent", kTraceEvent + Fields{{"joinedTraceId", T::kInt64}}},
      {kFlow + "trace.concurrency.monitor.MonitorEntryEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},
      {kFlow + "trace.concurrency.monitor.MonitorExitEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},
      {kFlow + "trace.concurrency.monitor.MonitorNotifyAllEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},
      {kFlow + "trace.concurrency.monitor.MonitorNotifyEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},
      {kFlow + "trace.concurrency.monitor.MonitorRequestEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},
      {kFlow + "trace.concurrency.monitor.MonitorWaitEvent",
       kTraceEvent + Fields{{"lockId", T::kInt32}}},

      {kFlow + "thread.BeforeThreadBasedEvent", kThreadEvent},
      {kFlow + "thread.AfterThreadBasedEvent", kThreadEvent},
      {kFlow + "thread.AfterFailedThreadBasedEvent", kThreadEvent + kCause},

      // Not trace events: their first fields are declared by the entity itself.
      {kFlow + "trace.BeforeSentRemoteEvent", kTraceEvent + Fields{{"technology", T::kString}}},
      {kFlow + "trace.BeforeReceivedRemoteEvent",
       {{"timestamp", T::kInt64},
        {"callerTraceId", T::kInt64},
        {"callerOrderIndex", T::kInt32},
        {"traceId", T::kInt64},
        {"orderIndex", T::kInt32}}},

      {"kieker.common.record.misc.OperationCallEvent",
       {{"sourceComponent", T::kString},
        {"sourceOperation", T::kString},
        {"targetComponent", T::kString},
        {"targetOperation", T::kString}}},
      {"kieker.common.record.misc.EmptyRecord", {}},
      {"kieker.common.record.misc.TimestampRecord", {{"timestamp", T::kInt64}}},
      {"kieker.common.record.misc.ThreadMetaData",
       {{"hostname", T::kString}, {"threadId", T::kInt64}}},
      {"kieker.common.record.misc.HostApplicationMetaData",
       {{"systemName", T::kString},
        {"ipAddress", T::kString},
        {"hostname", T::kString},
        {"applicationName", T::kString}}},

      {std::string(kieker_class::kCpuUtilization),
       kHost + Fields{{"cpuID", T::kString}} +
           doubles({"user", "system", "wait", "nice", "irq", "totalUtilization", "idle"})},
      {std::string(kieker_class::kMemSwapUsage), kHost + Fields{{"memTotal", T::kInt64},
                                                                {"memUsed", T::kInt64},
                                                                {"memFree", T::kInt64},
                                                                {"swapTotal", T::kInt64},
                                                                {"swapUsed", T::kInt64},
                                                                {"swapFree", T::kInt64}}},
      {kSystem + "ResourceUtilizationRecord",
       kHost + Fields{{"resourceName", T::kString}, {"utilization", T::kDouble}}},
      {kSystem + "NetworkUtilizationRecord",
       kHost + Fields{{"interfaceName", T::kString}, {"speed", T::kInt64}} +
           doubles({"txBytesPerSecond", "txCarrierPerSecond", "txCollisionsPerSecond",
                    "txDroppedPerSecond", "txErrorsPerSecond", "txOverrunsPerSecond",
                    "txPacketsPerSecond", "rxBytesPerSecond", "rxDroppedPerSecond",
                    "rxErrorsPerSecond", "rxFramePerSecond", "rxOverrunsPerSecond",
                    "rxPacketsPerSecond"})},
      {kSystem + "DiskUsageRecord",
       kHost + Fields{{"deviceName", T::kString}} +
           doubles({"queue", "readBytesPerSecond", "readsPerSecond", "serviceTime",
                    "writeBytesPerSecond", "writesPerSecond"})},
      {kSystem + "LoadAverageRecord",
       kHost + doubles({"oneMinLoadAverage", "fiveMinLoadAverage", "fifteenMinLoadAverage"})},
  };
}

}  // namespace

std::span<const RecordSchema* const> kieker_extra_schemas() {
  static const std::vector<const RecordSchema*>& all = *new std::vector<const RecordSchema*>([] {
    // Never destroyed: the writer thread may use them during exit.
    static const std::vector<RecordSchema>& schemas =
        *new std::vector<RecordSchema>(make_schemas());
    std::vector<const RecordSchema*> v;
    for (const RecordSchema& s : schemas) v.push_back(&s);
    return v;
  }());
  return all;
}

}  // namespace sonde::format
