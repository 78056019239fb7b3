// Expands a native log into Kieker-shaped records (operation events, trace
// metadata, one KiekerMetadataRecord per process), so every consumer of
// records reads native logs and native streams alike: the log reader and
// the collector's native connections.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "format/kieker_flow.hpp"
#include "format/native_reader.hpp"
#include "format/record.hpp"
#include "format/string_pool.hpp"

namespace sonde::format {

class NativeExpander final : public NativeVisitor {
 public:
  explicit NativeExpander(RecordSink& sink, NameForm form = NameForm::kCpp)
      : sink_(sink), flow_(sink, pool_, form) {}

  void on_meta(std::string_view key, std::string_view value) override;
  void on_thread(const NativeThread& t) override;
  void on_operation(const NativeOperation& op) override;
  void on_event(const NativeEvent& e) override;
  void on_record(const Record& r) override;

  // Records handed to the sink.
  uint64_t delivered() const { return delivered_; }
  // A flight-recorder snapshot's reason (META snapshot.reason), or "".
  const std::string& snapshot_reason() const { return snapshot_reason_; }
  // The sink asked to stop (returned false); nothing more is delivered.
  bool stopped() const { return stopped_; }

 private:
  void ensure_metadata();

  RecordSink& sink_;
  StringPool pool_;
  KiekerFlowBuilder flow_;
  std::string application_;
  std::string snapshot_reason_;
  int64_t start_ns_ = -1;
  bool metadata_sent_ = false;
  bool stopped_ = false;
  uint64_t delivered_ = 0;
};

}  // namespace sonde::format
