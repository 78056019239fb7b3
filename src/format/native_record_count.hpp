// Counts the records a NativeExpander delivers to a sink that takes flow
// records in typed form (the collector's), without building them. The
// collector's listener keeps a native stream's chunks as they came and
// leaves reconstruction to a worker that reads them back from the log; all
// it needs of the records is how many each chunk holds (its counts and
// confirmations), not the records themselves (issue 25).
//
// The rules are NativeExpander's and KiekerFlowBuilder's, for a typed sink:
//  - one KiekerMetadataRecord before the first thread definition or event,
//    unless a RECORD item of that class came first;
//  - a trace begin: one record (its W3C context travels in it);
//  - an enter, exit or failed exit: one record, plus an orphan trace's
//    begin on a thread with no trace begin yet (kieker_flow.cpp);
//  - a RECORD item: one; a lost marker: none.
// tests/format/native_record_count_test.cpp drives both with the same
// items and compares the counts.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "format/native_reader.hpp"

namespace sonde::format {

class NativeRecordCount final : public NativeVisitor {
 public:
  void on_thread(const NativeThread& t) override;
  void on_event(const NativeEvent& e) override;
  void on_record(const Record& r) override;

  uint64_t records() const { return records_; }

 private:
  void ensure_metadata();
  // Whether `thread` has begun a trace; marks it begun.
  bool begin(uint32_t thread);

  uint64_t records_ = 0;
  bool metadata_sent_ = false;
  // Thread indexes are dense (the monitor numbers them from 0); a corrupt
  // huge one goes to the set instead of growing the vector.
  static constexpr uint32_t kMaxDenseThread = 1u << 16;
  std::vector<bool> begun_;
  std::unordered_set<uint32_t> sparse_begun_;
};

}  // namespace sonde::format
