// What the native file writer and the native TCP writer share: everything
// the writer thread hands over is encoded by one format::NativeWriter;
// they differ only in where its chunks go (a file, or a queue a socket
// drains until the receiver confirms).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "format/native_writer.hpp"
#include "monitor/writers/event_writer.hpp"

namespace sonde::monitor {

class NativeEncodingWriter : public EventWriter {
 public:
  void operation(const OperationInfo& op) override;
  void thread(const ThreadInfo& t) override;
  void events(uint32_t thread, const DecodedEvent* e, size_t n) override;
  void record(const format::Record& r) override { writer_->record(r); }
  void clock(const Calibration& c) override;
  void loss(uint32_t thread, uint64_t n, std::string_view reason) override {
    writer_->loss(thread, n, reason);
  }
  bool failed() const override { return writer_ != nullptr && writer_->failed(); }
  std::string error() const override { return writer_ != nullptr ? writer_->error() : ""; }
  uint64_t bytes_written() const override { return writer_ ? writer_->bytes_written() : 0; }
  format::NativeWriter* native_encoder() override { return writer_.get(); }

 protected:
  std::unique_ptr<format::NativeWriter> writer_;  // set by open()

 private:
  std::unordered_map<size_t, uint32_t> cause_ids_;
};

}  // namespace sonde::monitor
