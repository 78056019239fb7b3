#include "format/schema.hpp"

#include <array>
#include <atomic>

#include "format/builtin_schemas.hpp"

namespace sonde::format {

uint64_t next_schema_serial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

std::string_view to_string(FieldType t) {
  switch (t) {
    case FieldType::kInt32:
      return "int";
    case FieldType::kInt64:
      return "long";
    case FieldType::kDouble:
      return "double";
    case FieldType::kFloat:
      return "float";
    case FieldType::kBool:
      return "boolean";
    case FieldType::kString:
      return "string";
    case FieldType::kByte:
      return "byte";
    case FieldType::kShort:
      return "short";
    case FieldType::kChar:
      return "char";
    case FieldType::kStringArray:
      return "string[]";
  }
  return "?";
}

bool parse_field_type(std::string_view name, FieldType* out) {
  static constexpr std::array kAll = {FieldType::kInt32,      FieldType::kInt64, FieldType::kDouble,
                                      FieldType::kFloat,      FieldType::kBool,  FieldType::kString,
                                      FieldType::kByte,       FieldType::kShort, FieldType::kChar,
                                      FieldType::kStringArray};
  for (FieldType t : kAll) {
    if (to_string(t) == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

int RecordSchema::kieker_payload_size() const {
  int size = 0;
  for (const FieldSpec& f : fields) size += kieker_binary_size(f.type);
  return size;
}

int RecordSchema::field_index(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

const RecordSchema* find_builtin_schema(std::string_view class_name) {
  for (const RecordSchema* s : builtin_schemas()) {
    if (s->class_name == class_name) return s;
  }
  return nullptr;
}

}  // namespace sonde::format
