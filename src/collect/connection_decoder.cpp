#include "collect/connection_decoder.hpp"

#include <cstdlib>
#include <optional>

#include "format/native_record_count.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::collect {

// Counts what reaches the connection's sink: records, and flow records in
// typed form (one each) when the sink takes them so (the collector's trace
// reconstruction: no Record is built per event).
class ConnectionRecordCounter final : public format::RecordSink, private format::TypedFlowSink {
 public:
  explicit ConnectionRecordCounter(format::RecordSink& sink) : sink_(sink) {}
  bool on_record(const format::Record& r) override {
    ++records;
    return sink_.on_record(r);
  }
  format::TypedFlowSink* typed_flow() override {
    typed_ = sink_.typed_flow();
    return typed_ != nullptr ? this : nullptr;
  }
  uint64_t records = 0;

 private:
  void on_source_begin() override { typed_->on_source_begin(); }
  void on_operation(uint32_t id, std::string_view signature, std::string_view component) override {
    typed_->on_operation(id, signature, component);
  }
  bool on_trace_start(const format::TypedTraceStart& start) override {
    ++records;
    return typed_->on_trace_start(start);
  }
  bool on_operation_event(const format::TypedOperationEvent& event) override {
    ++records;
    return typed_->on_operation_event(event);
  }

  format::RecordSink& sink_;
  format::TypedFlowSink* typed_ = nullptr;
};

// A native stream: the reader checks and decodes chunks, the expander turns
// them into records, and this visitor in between skips the events and
// records of chunks already stored from an earlier connection of the same
// stream (definitions always pass: later chunks refer to them). When the
// chunk sink only counts records (a collector that keeps logs), a counter
// takes the expander's place and the records are reported a chunk at a
// time.
class ConnectionDecoder::NativeStream final : public format::NativeVisitor {
 public:
  NativeStream(const std::string& peer, format::RecordSink& sink, StoredChunks& stored,
               NativeChunkSink* chunks, format::NameForm names)
      : counter_(sink), stored_(stored), chunks_(chunks), reader_(*this, peer) {
    if (chunks == nullptr || !chunks->counts_records_only()) expander_.emplace(counter_, names);
    reader_.keep_definitions(chunks_ != nullptr);
    // Counting needs no event times (nor does the check of each chunk).
    reader_.convert_times(expander_.has_value());
  }

  format::NativeStreamReader& reader() { return reader_; }
  bool stopped() const { return (expander_ && expander_->stopped()) || chunk_sink_failed_; }
  uint64_t records() const { return expander_ ? counter_.records : count_.records(); }
  uint64_t duplicates() const { return duplicates_; }
  // Records the chunk being decoded when reading stopped had delivered:
  // they reached the record sink, but the chunk's bytes were not stored.
  uint64_t records_of_unfinished_chunk() const {
    return in_chunk_ ? records() - records_at_chunk_start_ : 0;
  }
  // Counting only: the records of a chunk rejected part-way were counted
  // but not yet reported as received. Once, after the rejection.
  void report_unfinished_chunk() {
    const uint64_t n = records_of_unfinished_chunk();
    if (!expander_ && n > 0 && !chunk_sink_failed_ && !chunks_->on_records_received(n)) {
      chunk_sink_failed_ = true;
    }
  }

  void on_stream_header(std::string_view header) override {
    if (chunks_ != nullptr && !chunks_->on_stream_header(header)) chunk_sink_failed_ = true;
  }
  void on_chunk_done(uint64_t /*index*/, std::string_view chunk, std::string_view definitions,
                     uint32_t definition_items) override {
    in_chunk_ = false;
    if (chunks_ == nullptr || stopped()) return;
    const uint64_t records = this->records() - records_at_chunk_start_;
    if (!expander_ && records > 0 && !chunks_->on_records_received(records)) {
      chunk_sink_failed_ = true;  // received, not stored: the sink names why
      return;
    }
    if (!chunks_->on_native_chunk(chunk, records, skipping_, definitions, definition_items)) {
      chunk_sink_failed_ = true;
    }
  }

  ~NativeStream() override {
    if (!stream_id_.empty()) stored_.detach(stream_id_);
  }

  void on_meta(std::string_view key, std::string_view value) override {
    // Once per connection (its preamble chunk names the stream).
    if (key == "stream.id" && stream_id_.empty()) {
      stream_id_ = std::string(value);
      stored_.attach(stream_id_);
    }
    if (key == "stream.first_chunk") {
      first_chunk_ = std::strtoull(std::string(value).c_str(), nullptr, 10);
    }
    if (expander_) expander_->on_meta(key, value);
  }
  void on_thread(const format::NativeThread& t) override {
    if (expander_) {
      expander_->on_thread(t);
    } else if (!chunk_sink_failed_) {
      count_.on_thread(t);
    }
  }
  void on_operation(const format::NativeOperation& op) override {
    if (expander_) expander_->on_operation(op);
  }
  void on_event(const format::NativeEvent& e) override {
    if (skipping_) return;
    if (expander_) {
      expander_->on_event(e);
    } else if (!chunk_sink_failed_) {
      count_.on_event(e);
    }
  }
  void on_record(const format::Record& r) override {
    if (skipping_) return;
    if (expander_) {
      expander_->on_record(r);
    } else if (!chunk_sink_failed_) {
      count_.on_record(r);
    }
  }
  void on_chunk(uint64_t index) override {
    // Chunk 0 of a stream is its preamble (stream id and the definitions
    // so far); data chunk `index` is stream chunk first_chunk + index - 1.
    in_chunk_ = true;
    records_at_chunk_start_ = records();
    skipping_ = false;
    if (index == 0 || stream_id_.empty() || first_chunk_ == 0) return;
    const uint64_t number = first_chunk_ + index - 1;
    uint64_t& stored = stored_.highest_stored(stream_id_);
    if (number <= stored) {
      skipping_ = true;
      ++duplicates_;
    } else {
      stored = number;
    }
  }

 private:
  ConnectionRecordCounter counter_;
  StoredChunks& stored_;
  NativeChunkSink* chunks_;
  // None when the chunk sink only counts records: count_ counts them.
  std::optional<format::NativeExpander> expander_;
  format::NativeRecordCount count_;
  format::NativeStreamReader reader_;
  std::string stream_id_;
  uint64_t first_chunk_ = 0;
  bool skipping_ = false;
  uint64_t duplicates_ = 0;
  bool in_chunk_ = false;
  uint64_t records_at_chunk_start_ = 0;
  bool chunk_sink_failed_ = false;
};

ConnectionDecoder::ConnectionDecoder(std::string peer, format::RecordSink& sink,
                                     StoredChunks& stored, NativeChunkSink* chunks,
                                     format::NameForm names)
    : peer_(std::move(peer)), sink_(sink), stored_(stored), chunks_(chunks), names_(names) {}

ConnectionDecoder::~ConnectionDecoder() = default;

bool ConnectionDecoder::feed(const void* data, size_t size) {
  if (failed() || stopped_) return false;
  if (size == 0) return true;
  if (!kieker_ && !native_) {
    if (*static_cast<const char*>(data) == format::native::kFileMagic[0]) {
      native_ = std::make_unique<NativeStream>(peer_, sink_, stored_, chunks_, names_);
    } else {
      kieker_ = std::make_unique<format::kieker::TcpDecoder>(peer_);
    }
  }
  if (kieker_) {
    const bool ok = kieker_->feed(data, size, sink_);
    if (kieker_->failed()) error_ = kieker_->error();
    stopped_ = kieker_->stopped();
    return ok;
  }
  const bool ok = native_->reader().feed(data, size);
  if (!ok) {
    error_ = native_->reader().result().error;
    native_->report_unfinished_chunk();
    // Not silent: the records a rejected chunk delivered before its bad
    // item are counted as received but not stored (the collector's
    // reconstruction reads the log, so they reached no trace either).
    if (const uint64_t n = native_->records_of_unfinished_chunk(); n > 0 && chunks_ != nullptr) {
      error_ += "; the chunk was not stored, its first " + std::to_string(n) +
                " records were counted as received only";
    }
  }
  stopped_ = native_->stopped();
  return ok && !stopped_;
}

bool ConnectionDecoder::finish() {
  if (failed()) return false;
  if (kieker_) {
    if (!kieker_->finish()) error_ = kieker_->error();
  } else if (native_) {
    const format::NativeReadResult& r = native_->reader().finish();
    if (!r.ok) {
      error_ = r.error;
    } else if (r.truncated) {
      error_ = peer_ + ": offset " + std::to_string(native_->reader().consumed()) +
               ": the stream ended inside a chunk (" + std::to_string(r.truncated_bytes) +
               " bytes not decoded)";
    }
  }
  return !failed();
}

uint64_t ConnectionDecoder::records() const {
  return kieker_ ? kieker_->records() : native_ ? native_->records() : 0;
}

uint64_t ConnectionDecoder::offset() const {
  return kieker_ ? kieker_->offset() : native_ ? native_->reader().consumed() : 0;
}

uint64_t ConnectionDecoder::chunks() const {
  return native_ ? native_->reader().result().chunks : 0;
}

uint64_t ConnectionDecoder::duplicate_chunks() const { return native_ ? native_->duplicates() : 0; }

}  // namespace sonde::collect
