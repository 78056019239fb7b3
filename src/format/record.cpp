#include "format/record.hpp"

namespace sonde::format {

void reset_to_defaults(Record& r, const RecordSchema* schema) {
  r.schema = schema;
  r.logging_timestamp = -1;
  r.values.resize(schema->fields.size());
  for (size_t i = 0; i < schema->fields.size(); ++i) {
    switch (schema->fields[i].type) {
      case FieldType::kDouble:
      case FieldType::kFloat:
        r.values[i] = 0.0;
        break;
      case FieldType::kBool:
        r.values[i] = false;
        break;
      case FieldType::kString:
        r.values[i] = std::string_view();
        break;
      case FieldType::kStringArray:
        r.values[i] = std::vector<std::string_view>();
        break;
      default:
        r.values[i] = int64_t{0};
        break;
    }
  }
}

bool values_match_schema(const Record& r) {
  if (r.schema == nullptr || r.values.size() != r.schema->fields.size()) return false;
  for (size_t i = 0; i < r.values.size(); ++i) {
    const Value& v = r.values[i];
    switch (r.schema->fields[i].type) {
      case FieldType::kDouble:
      case FieldType::kFloat:
        if (!std::holds_alternative<double>(v)) return false;
        break;
      case FieldType::kBool:
        if (!std::holds_alternative<bool>(v)) return false;
        break;
      case FieldType::kString:
        if (!std::holds_alternative<std::string_view>(v)) return false;
        break;
      case FieldType::kStringArray:
        if (!std::holds_alternative<std::vector<std::string_view>>(v)) return false;
        break;
      default:
        if (!std::holds_alternative<int64_t>(v)) return false;
        break;
    }
  }
  return true;
}

}  // namespace sonde::format
