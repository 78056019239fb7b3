#include "format/native_expander.hpp"

#include <cstdlib>

#include "format/schema.hpp"

namespace sonde::format {

void NativeExpander::on_meta(std::string_view key, std::string_view value) {
  if (key == "host") flow_.set_host(value);
  if (key == "application") application_ = std::string(value);
  if (key == "start_epoch_ns") start_ns_ = std::atoll(std::string(value).c_str());
  if (key == "snapshot.reason") snapshot_reason_ = std::string(value);
}

void NativeExpander::on_thread(const NativeThread& t) {
  ensure_metadata();
  flow_.define_thread(t.index, t.os_tid);
}

void NativeExpander::on_operation(const NativeOperation& op) {
  flow_.define_operation(op.id, op.name, op.module, op.kind);
}

void NativeExpander::on_event(const NativeEvent& e) {
  if (stopped_) return;
  ensure_metadata();
  FlowEvent f{e.kind, e.time_ns, e.op, e.cause, e.trace_id, e.parent_trace_id, e.parent_order_id,
              e.lost, e.w3c};
  if (!flow_.event(e.thread, f)) stopped_ = true;
  ++delivered_;
}

void NativeExpander::on_record(const Record& r) {
  if (stopped_) return;
  // A log converted from Kieker carries its own metadata record.
  if (r.schema->class_name == kieker_class::kMetadata) metadata_sent_ = true;
  if (!sink_.on_record(r)) stopped_ = true;
  ++delivered_;
}

void NativeExpander::ensure_metadata() {
  if (metadata_sent_) return;
  metadata_sent_ = true;
  if (!flow_.metadata("sonde-native-1", application_.empty() ? "sonde" : application_, start_ns_)) {
    stopped_ = true;
  }
}

}  // namespace sonde::format
