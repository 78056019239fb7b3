// Schemas of the callable records (callable_schemas.hpp): what OPEN.xtrace
// models besides method executions, so that reading an OPEN.xtrace file
// into records loses none of it. Field order must match the indexes in
// callable_schemas.hpp.
#include <array>

#include "format/builtin_schemas.hpp"
#include "format/callable_schemas.hpp"

namespace sonde::format {
namespace {

using T = FieldType;

std::vector<FieldSpec> positioned(std::vector<FieldSpec> fields) {
  std::vector<FieldSpec> all = {
      {"timestamp", T::kInt64}, {"traceId", T::kInt64}, {"orderIndex", T::kInt32}};
  all.insert(all.end(), fields.begin(), fields.end());
  return all;
}

// Built on first use: a lookup made during another file's static
// initialisation must not see unconstructed schemas.
std::array<RecordSchema, 5> make_schemas() {
  return {RecordSchema{std::string(callable_class::kDatabaseCall),
                       positioned({{"duration", T::kInt64},
                                   {"sqlStatement", T::kString},
                                   {"prepared", T::kBool},
                                   {"boundSqlStatement", T::kString},
                                   {"unboundSqlStatement", T::kString},
                                   {"parameterBindings", T::kStringArray},
                                   {"dbProductName", T::kString},
                                   {"dbProductVersion", T::kString},
                                   {"dbUrl", T::kString}})},
          RecordSchema{std::string(callable_class::kHttpRequest),
                       positioned({{"uri", T::kString},
                                   {"method", T::kString},
                                   {"responseCode", T::kInt32},
                                   {"requestHeaders", T::kStringArray},
                                   {"parameters", T::kStringArray},
                                   {"attributes", T::kStringArray},
                                   {"sessionAttributes", T::kStringArray},
                                   {"responseHeaders", T::kStringArray},
                                   {"body", T::kString}})},
          RecordSchema{std::string(callable_class::kExceptionThrow),
                       positioned({{"throwableType", T::kString},
                                   {"errorMessage", T::kString},
                                   {"cause", T::kString},
                                   {"stackTrace", T::kString},
                                   {"propagated", T::kBool}})},
          RecordSchema{std::string(callable_class::kLogMessage),
                       positioned({{"level", T::kString}, {"message", T::kString}})},
          RecordSchema{std::string(callable_class::kRemoteCall),
                       positioned({{"duration", T::kInt64},
                                   {"target", T::kString},
                                   {"targetTraceId", T::kInt64}})}};
}

}  // namespace

std::span<const RecordSchema* const> callable_schemas() {
  // Never destroyed: the writer thread may use them during exit.
  static const std::array<RecordSchema, 5>& schemas =
      *new std::array<RecordSchema, 5>(make_schemas());
  static const std::array<const RecordSchema*, 5> pointers = {&schemas[0], &schemas[1], &schemas[2],
                                                              &schemas[3], &schemas[4]};
  return pointers;
}

}  // namespace sonde::format
