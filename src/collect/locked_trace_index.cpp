#include "collect/locked_trace_index.hpp"

namespace sonde::collect {

void LockedTraceIndex::note_error() {
  if (error_.empty() && !index_->error().empty()) {
    error_ = index_->error();
    failed_.store(true, std::memory_order_relaxed);
  }
}

void LockedTraceIndex::add(const analysis::Trace& trace, int64_t client) {
  std::lock_guard<std::mutex> lock(mu_);
  index_->add(trace, client);
  note_error();
}

void LockedTraceIndex::add_all(std::span<const analysis::Trace> traces, int64_t client) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const analysis::Trace& t : traces) index_->add(t, client);
  note_error();
}

void LockedTraceIndex::add_invalid(const analysis::InvalidTrace& trace, int64_t client) {
  std::lock_guard<std::mutex> lock(mu_);
  index_->add_invalid(trace, client);
  note_error();
}

void LockedTraceIndex::put_client(const store::ClientRecord& client) {
  std::lock_guard<std::mutex> lock(mu_);
  index_->put_client(client);
  note_error();
}

void LockedTraceIndex::count(const analysis::Trace& trace) {
  std::lock_guard<std::mutex> lock(mu_);
  index_->count(trace);
  note_error();
}

void LockedTraceIndex::add_reduced(const analysis::ReducedTrace& trace, int64_t client) {
  std::lock_guard<std::mutex> lock(mu_);
  index_->add_reduced(trace, client);
  note_error();
}

int64_t LockedTraceIndex::next_client_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return index_->next_client_id();
}

std::string LockedTraceIndex::commit() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string e = index_->commit();
  note_error();
  return e;
}

std::string LockedTraceIndex::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string e = index_->finish();
  note_error();
  return e;
}

const std::string& LockedTraceIndex::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace sonde::collect
