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

// The value if it holds a T, else `fallback` (the Kieker codecs' encoders).
template <typename T>
T value_or(const Value& v, T fallback) {
  const T* p = std::get_if<T>(&v);
  return p ? *p : fallback;
}

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

// Events the monitor counted as lost at a point of a thread's stream (a
// native log's lost marker): where the record stream has a gap.
struct LostEvents {
  int64_t time_ns = 0;
  std::string_view host;
  int64_t thread_id = -1;  // the thread's OS id
  uint64_t count = 0;
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual bool on_record(const Record& r) = 0;
  // A lost marker; the records around it arrive as usual (the traces it
  // falls into are incomplete). Most sinks only need the counts in
  // LogReadStats, so the default ignores it; a sink that wraps another
  // forwards it where the inner sink draws it (the Perfetto export).
  virtual void on_lost_events(const LostEvents& /*lost*/) {}
  // A sink that can take flow records in typed form (typed_flow_sink.hpp)
  // returns its TypedFlowSink; readers then use it for flow records and
  // on_record for everything else. Sinks that wrap another sink must either
  // forward this or leave it null (then they see every record).
  virtual TypedFlowSink* typed_flow() { return nullptr; }
};

}  // namespace sonde::format
