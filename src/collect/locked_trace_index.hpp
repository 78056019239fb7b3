// The store shared by the collector's threads: its analysis workers add
// traces while the listener thread names clients and commits. SQLite's
// writer (and the ClickHouse batcher) take one caller at a time, so every
// call goes through one mutex. A trace is added whole under the lock; the
// reconstruction that builds it (most of a record's cost) runs outside it.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "store/index_sink.hpp"

namespace sonde::collect {

class LockedTraceIndex final : public store::TraceIndex {
 public:
  explicit LockedTraceIndex(std::unique_ptr<store::TraceIndex> index) : index_(std::move(index)) {}

  void add(const analysis::Trace& trace, int64_t client) override;
  // Several traces under one acquisition of the lock: workers adding a
  // trace at a time contended for it (two workers took 3.3 times the CPU
  // of one, most of it in the kernel's futex calls; 2026-12-03).
  void add_all(std::span<const analysis::Trace> traces, int64_t client);
  void add_invalid(const analysis::InvalidTrace& trace, int64_t client) override;
  void put_client(const store::ClientRecord& client) override;
  void count(const analysis::Trace& trace) override;
  void add_reduced(const analysis::ReducedTrace& trace, int64_t client) override;
  int64_t next_client_id() const override;
  std::string commit() override;
  std::string finish() override;
  // Only when no other thread uses the index (the reference is not
  // guarded); while workers run, failed(), and the errors commit() and
  // finish() return.
  const std::string& error() const override;
  // True once the store failed; lock-free, for checks per record.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  void note_error();  // called with the lock held

  std::unique_ptr<store::TraceIndex> index_;
  mutable std::mutex mu_;
  std::string error_;  // written once, under mu_, when the store first fails
  std::atomic<bool> failed_{false};
};

}  // namespace sonde::collect
