// Schemas of the diagnostic records (diagnostic_schemas.hpp). Field order
// must match the indexes there and the table in
// docs/diagnose/experiment-data.md. And the W3C trace context a trace
// continued (w3c_ids.hpp).
#include <array>

#include "format/builtin_schemas.hpp"
#include "format/diagnostic_schemas.hpp"
#include "format/w3c_ids.hpp"

namespace sonde::format {
namespace {

using T = FieldType;

std::vector<FieldSpec> positioned(std::vector<FieldSpec> fields) {
  std::vector<FieldSpec> all = {
      {"timestamp", T::kInt64}, {"traceId", T::kInt64}, {"orderIndex", T::kInt32}};
  all.insert(all.end(), fields.begin(), fields.end());
  return all;
}

std::array<RecordSchema, 3> make_schemas() {
  return {
      RecordSchema{std::string(diagnostic_class::kLockWait),
                   positioned({{"waitDuration", T::kInt64},
                               {"holdDuration", T::kInt64},
                               {"lock", T::kString},
                               {"operation", T::kString}})},
      RecordSchema{
          std::string(diagnostic_class::kMessageSend),
          positioned({{"duration", T::kInt64}, {"destination", T::kString}, {"bytes", T::kInt64}})},
      RecordSchema{std::string(w3c::kTraceContextClass),
                   {{"traceId", T::kInt64},
                    {"w3cTraceIdHigh", T::kInt64},
                    {"w3cTraceIdLow", T::kInt64},
                    {"parentSpanId", T::kInt64}}}};
}

}  // namespace

std::span<const RecordSchema* const> diagnostic_schemas() {
  // Built on first use and never destroyed: the writer thread may use them during exit.
  static const std::array<RecordSchema, 3>& schemas =
      *new std::array<RecordSchema, 3>(make_schemas());
  static const std::array<const RecordSchema*, 3> pointers = {&schemas[0], &schemas[1],
                                                              &schemas[2]};
  return pointers;
}

}  // namespace sonde::format
