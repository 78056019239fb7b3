#include "monitor/samplers/record_builder.hpp"

#include <cmath>
#include <limits>

namespace sonde::monitor::samplers {
namespace {

using format::FieldType;

bool is_integral(FieldType t) {
  return t == FieldType::kInt32 || t == FieldType::kInt64 || t == FieldType::kShort ||
         t == FieldType::kByte || t == FieldType::kChar;
}

// Rounds to the nearest integer, saturating instead of invoking undefined
// behaviour on NaN or values beyond int64.
int64_t round_saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return std::llround(v);
}

}  // namespace

RecordBuilder::RecordBuilder(const format::RecordSchema* schema) {
  format::reset_to_defaults(record_, schema);
}

RecordBuilder& RecordBuilder::set_int(std::string_view field, int64_t v) {
  const int i = record_.schema->field_index(field);
  if (i < 0) return *this;
  const FieldType t = record_.schema->fields[static_cast<size_t>(i)].type;
  if (is_integral(t)) {
    record_.values[static_cast<size_t>(i)] = v;
  } else if (t == FieldType::kDouble || t == FieldType::kFloat) {
    record_.values[static_cast<size_t>(i)] = static_cast<double>(v);
  }
  return *this;
}

RecordBuilder& RecordBuilder::set_double(std::string_view field, double v) {
  const int i = record_.schema->field_index(field);
  if (i < 0) return *this;
  const FieldType t = record_.schema->fields[static_cast<size_t>(i)].type;
  if (t == FieldType::kDouble || t == FieldType::kFloat) {
    record_.values[static_cast<size_t>(i)] = v;
  } else if (is_integral(t)) {
    record_.values[static_cast<size_t>(i)] = round_saturating(v);
  }
  return *this;
}

RecordBuilder& RecordBuilder::set_string(std::string_view field, std::string_view v) {
  const int i = record_.schema->field_index(field);
  if (i >= 0 && record_.schema->fields[static_cast<size_t>(i)].type == FieldType::kString) {
    record_.values[static_cast<size_t>(i)] = v;
  }
  return *this;
}

}  // namespace sonde::monitor::samplers
