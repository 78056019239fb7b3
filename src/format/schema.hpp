// Record schemas: the one place where every record type's fields are defined.
// Every codec (.dat, .bin, TCP, native) derives its layout from these tables,
// as Kieker derives its serializers from one IRL definition.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::format {

// Field types with Kieker's binary sizes (int 4, long 8, double 8, float 4,
// short 2, char 2, byte 1, boolean 1, string 4 as a registry id).
enum class FieldType : uint8_t {
  kInt32 = 1,
  kInt64 = 2,
  kDouble = 3,
  kFloat = 4,
  kBool = 5,
  kString = 6,
  kByte = 7,
  kShort = 8,
  kChar = 9,
  kStringArray = 10,  // int32 count, then that many strings
};

std::string_view to_string(FieldType t);
// Returns false if `name` is not a known field type name.
bool parse_field_type(std::string_view name, FieldType* out);
// Fixed binary size of one field in Kieker's .bin layout (arrays: the count
// only). Inline: the Kieker decoders ask it for every field of every record.
constexpr int kieker_binary_size(FieldType t) {
  switch (t) {
    case FieldType::kInt64:
    case FieldType::kDouble:
      return 8;
    case FieldType::kInt32:
    case FieldType::kFloat:
    case FieldType::kString:
    case FieldType::kStringArray:
      return 4;
    case FieldType::kShort:
    case FieldType::kChar:
      return 2;
    case FieldType::kBool:
    case FieldType::kByte:
      return 1;
  }
  return 0;
}

struct FieldSpec {
  std::string name;
  FieldType type;
};

// A process-wide unique number per schema object (copies share it). Lets
// consumers cache per-schema decisions keyed by address without a string
// compare per record, even if a schema is freed and another one is later
// allocated at the same address.
uint64_t next_schema_serial();

struct RecordSchema {
  std::string class_name;  // Kieker's Java class name, or "sonde.*" for sonde's own
  std::vector<FieldSpec> fields;
  uint64_t serial = next_schema_serial();

  // Minimum payload size in Kieker's .bin layout (exact when there are no arrays).
  int kieker_payload_size() const;
  // Index of a field by name, or -1.
  int field_index(std::string_view name) const;
};

// Built-in schemas. Pointers stay valid for the life of the program.
const RecordSchema* find_builtin_schema(std::string_view class_name);
std::span<const RecordSchema* const> builtin_schemas();

// Well-known class names (the Kieker types sonde produces itself).
namespace kieker_class {
inline constexpr std::string_view kMetadata = "kieker.common.record.misc.KiekerMetadataRecord";
inline constexpr std::string_view kTraceMetadata = "kieker.common.record.flow.trace.TraceMetadata";
inline constexpr std::string_view kBeforeOperation =
    "kieker.common.record.flow.trace.operation.BeforeOperationEvent";
inline constexpr std::string_view kAfterOperation =
    "kieker.common.record.flow.trace.operation.AfterOperationEvent";
inline constexpr std::string_view kAfterOperationFailed =
    "kieker.common.record.flow.trace.operation.AfterOperationFailedEvent";
inline constexpr std::string_view kCallOperation =
    "kieker.common.record.flow.trace.operation.CallOperationEvent";
inline constexpr std::string_view kOperationExecution =
    "kieker.common.record.controlflow.OperationExecutionRecord";
inline constexpr std::string_view kCpuUtilization =
    "kieker.common.record.system.CPUUtilizationRecord";
inline constexpr std::string_view kMemSwapUsage = "kieker.common.record.system.MemSwapUsageRecord";
}  // namespace kieker_class

}  // namespace sonde::format
