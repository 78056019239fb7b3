#include "analysis/reconstruct/callable_record_buffer.hpp"

#include <unordered_set>

#include "format/callable_schemas.hpp"
#include "format/schema.hpp"

namespace sonde::analysis {

int64_t OwnedRecord::timestamp() const { return i64(format::callable_field::kTimestamp); }
int64_t OwnedRecord::trace_id() const { return i64(format::callable_field::kTraceId); }
int32_t OwnedRecord::order_index() const {
  return static_cast<int32_t>(i64(format::callable_field::kOrderIndex));
}

bool CallableRecordBuffer::is_callable(const format::RecordSchema* schema) {
  // Compared by name: a reader may hand on its own copy of a built-in schema.
  const std::string& n = schema->class_name;
  return n == format::callable_class::kDatabaseCall || n == format::callable_class::kHttpRequest ||
         n == format::callable_class::kExceptionThrow || n == format::callable_class::kLogMessage ||
         n == format::callable_class::kRemoteCall;
}

bool CallableRecordBuffer::on_record(const format::Record& r) {
  if (r.schema == nullptr || !is_callable(r.schema) || !format::values_match_schema(r)) {
    return true;
  }
  OwnedRecord owned;
  owned.schema = format::find_builtin_schema(r.schema->class_name);
  if (owned.schema == nullptr || owned.schema->fields.size() != r.values.size()) return true;
  owned.values.reserve(r.values.size());
  for (const format::Value& v : r.values) {
    if (const auto* s = std::get_if<std::string_view>(&v)) {
      owned.values.emplace_back(std::string(*s));
    } else if (const auto* list = std::get_if<std::vector<std::string_view>>(&v)) {
      owned.values.emplace_back(std::vector<std::string>(list->begin(), list->end()));
    } else if (const auto* i = std::get_if<int64_t>(&v)) {
      owned.values.emplace_back(*i);
    } else if (const auto* d = std::get_if<double>(&v)) {
      owned.values.emplace_back(*d);
    } else {
      owned.values.emplace_back(std::get<bool>(v));
    }
  }
  std::vector<OwnedRecord>& list = by_trace_[owned.trace_id()];
  if (list.empty()) arrival_.push_back(owned.trace_id());
  list.push_back(std::move(owned));
  ++pending_;
  while (max_records_ != 0 && pending_ > max_records_ && !arrival_.empty()) {
    auto oldest = by_trace_.find(arrival_.front());
    arrival_.pop_front();
    if (oldest == by_trace_.end()) continue;  // taken already
    pending_ -= oldest->second.size();
    dropped_ += oldest->second.size();
    by_trace_.erase(oldest);
  }
  return true;
}

std::vector<OwnedRecord> CallableRecordBuffer::take(int64_t trace_id) {
  auto it = by_trace_.find(trace_id);
  if (it == by_trace_.end()) return {};
  std::vector<OwnedRecord> out = std::move(it->second);
  by_trace_.erase(it);
  pending_ -= out.size();
  // Its arrival_ entry stays (on_record skips entries already taken) until
  // stale entries outnumber live ones: then the queue is rebuilt.
  if (arrival_.size() > 2 * by_trace_.size() + 1024) {
    std::deque<int64_t> live;
    std::unordered_set<int64_t> seen;
    for (int64_t id : arrival_) {
      if (by_trace_.count(id) != 0 && seen.insert(id).second) live.push_back(id);
    }
    arrival_ = std::move(live);
  }
  return out;
}

}  // namespace sonde::analysis
