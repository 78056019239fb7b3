// A test-only schema with one field of every type, shared by the codec tests,
// and a schema lookup that knows it besides the built-ins.
#pragma once

#include <string_view>

#include "format/schema.hpp"

namespace sonde::format::testing {

inline const RecordSchema kAllTypes{"test.AllTypes",
                                    {{"i", FieldType::kInt32},
                                     {"l", FieldType::kInt64},
                                     {"d", FieldType::kDouble},
                                     {"f", FieldType::kFloat},
                                     {"b", FieldType::kBool},
                                     {"s", FieldType::kString},
                                     {"y", FieldType::kByte},
                                     {"h", FieldType::kShort},
                                     {"c", FieldType::kChar},
                                     {"a", FieldType::kStringArray}}};

inline const RecordSchema* lookup_with_all_types(std::string_view name) {
  return name == kAllTypes.class_name ? &kAllTypes : find_builtin_schema(name);
}

}  // namespace sonde::format::testing
