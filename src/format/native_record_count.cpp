#include "format/native_record_count.hpp"

#include "format/schema.hpp"

namespace sonde::format {

void NativeRecordCount::on_thread(const NativeThread& /*t*/) { ensure_metadata(); }

void NativeRecordCount::on_event(const NativeEvent& e) {
  ensure_metadata();
  switch (e.kind) {
    case native::EventKind::kTraceBegin:
      begin(e.thread);
      ++records_;
      break;
    case native::EventKind::kEnter:
    case native::EventKind::kExit:
    case native::EventKind::kExitFailed:
      if (!begin(e.thread)) ++records_;  // the orphan trace's begin
      ++records_;
      break;
    case native::EventKind::kTraceContext:  // delivered with its trace begin
    case native::EventKind::kLost:
      break;
  }
}

void NativeRecordCount::on_record(const Record& r) {
  // A log converted from Kieker carries its own metadata record.
  if (r.schema->class_name == kieker_class::kMetadata) metadata_sent_ = true;
  ++records_;
}

void NativeRecordCount::ensure_metadata() {
  if (metadata_sent_) return;
  metadata_sent_ = true;
  ++records_;
}

bool NativeRecordCount::begin(uint32_t thread) {
  if (thread >= kMaxDenseThread) return !sparse_begun_.insert(thread).second;
  if (thread >= begun_.size()) begun_.resize(thread + 1, false);
  const bool was = begun_[thread];
  begun_[thread] = true;
  return was;
}

}  // namespace sonde::format
