// Keeps the callable records (format/callable_schemas.hpp: database calls,
// HTTP requests, exceptions, log messages, remote calls) of each trace id
// until the trace they belong to is written, because traces are stitched
// and handed on long after their records went by. Records are copied, so
// the reader's strings need not outlive them.
//
// Bounded: past `max_records`, the records of the trace id that has waited
// longest are dropped (counted). Records of traces never written (invalid
// ones, or filtered out) stay until take() or clear().
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "format/record.hpp"

namespace sonde::analysis {

// A record that owns its strings.
struct OwnedRecord {
  using OwnedValue = std::variant<int64_t, double, bool, std::string, std::vector<std::string>>;
  const format::RecordSchema* schema = nullptr;
  std::vector<OwnedValue> values;

  int64_t i64(size_t f) const { return std::get<int64_t>(values[f]); }
  bool flag(size_t f) const { return std::get<bool>(values[f]); }
  const std::string& str(size_t f) const { return std::get<std::string>(values[f]); }
  const std::vector<std::string>& list(size_t f) const {
    return std::get<std::vector<std::string>>(values[f]);
  }
  int64_t timestamp() const;
  int64_t trace_id() const;
  int32_t order_index() const;
};

class CallableRecordBuffer : public format::RecordSink {
 public:
  explicit CallableRecordBuffer(size_t max_records = 1'000'000) : max_records_(max_records) {}

  // Keeps callable records; ignores every other record. Never stops reading.
  bool on_record(const format::Record& r) override;

  // The records of `trace_id` in arrival order, removed from the buffer.
  std::vector<OwnedRecord> take(int64_t trace_id);

  size_t pending() const { return pending_; }
  uint64_t dropped() const { return dropped_; }

  static bool is_callable(const format::RecordSchema* schema);

 private:
  size_t max_records_;
  size_t pending_ = 0;
  uint64_t dropped_ = 0;
  std::unordered_map<int64_t, std::vector<OwnedRecord>> by_trace_;
  std::deque<int64_t> arrival_;  // trace ids in order of their first record
};

}  // namespace sonde::analysis
