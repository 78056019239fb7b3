// The generic record: a schema plus one value per field. Readers reuse one
// Record per call so that reading allocates nothing per record; strings are
// views into a StringPool owned by the reader and live as long as it does.
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

#include "format/schema.hpp"

namespace sonde::format {

// int32/int64/short/byte/char are held as int64; float/double as double.
using Value = std::variant<int64_t, double, bool, std::string_view, std::vector<std::string_view>>;

struct Record {
  const RecordSchema* schema = nullptr;
  int64_t logging_timestamp = -1;  // Kieker's header timestamp; -1 when unset
  std::vector<Value> values;       // one per schema field, in schema order

  int64_t i64(size_t field) const { return std::get<int64_t>(values[field]); }
  double f64(size_t field) const { return std::get<double>(values[field]); }
  bool flag(size_t field) const { return std::get<bool>(values[field]); }
  std::string_view str(size_t field) const { return std::get<std::string_view>(values[field]); }
};

// Fills `r` with the schema's default values (0, false, "", empty array).
void reset_to_defaults(Record& r, const RecordSchema* schema);

// Checks that every value's alternative matches its field type.
bool values_match_schema(const Record& r);

// Receives records from any reader. Returning false stops reading.
class TypedFlowSink;

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual bool on_record(const Record& r) = 0;
  // A sink that can take flow records in typed form (typed_flow_sink.hpp)
  // returns its TypedFlowSink; readers then use it for flow records and
  // on_record for everything else. Sinks that wrap another sink must either
  // forward this or leave it null (then they see every record).
  virtual TypedFlowSink* typed_flow() { return nullptr; }
};

}  // namespace sonde::format
