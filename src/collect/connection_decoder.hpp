// Decodes one connection's bytes into records, whichever protocol the
// monitored process speaks. The first byte decides: sonde's native stream
// starts with the log magic "SONDELOG" (docs/formats/native.md, "Streaming
// over TCP"); Kieker's TCP frames start with a big-endian int32 that is -1
// (0xFF...) or a small string id (0x00...), never 'S'.
//
// Native streams are confirmed chunk by chunk (the listener sends the
// count back once the records are stored) and carry a stream id, so a
// stream that reconnects and resends chunks this collector already stored
// has them skipped, not stored twice.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "collect/stored_chunks.hpp"
#include "format/kieker_tcp.hpp"
#include "format/native_expander.hpp"
#include "format/native_reader.hpp"
#include "format/record.hpp"

namespace sonde::collect {

// Takes a native stream's bytes as the log format stores them, once the
// reader has checked and decoded them (the collector writes them to the
// client's log as they are). Returning false stops the connection.
class NativeChunkSink {
 public:
  virtual ~NativeChunkSink() = default;
  // The stream's 16-byte file header, before any chunk.
  virtual bool on_stream_header(std::string_view header) = 0;
  // A chunk that decoded completely: `chunk` is its header and stored
  // payload as received, `records` the records it delivered to the record
  // sink. A chunk resent from an earlier connection and already stored
  // (`duplicate`) delivered no events; only its definition items
  // (`definitions`, `definition_items` of them, raw) are new to this
  // connection, and later chunks may refer to them.
  virtual bool on_native_chunk(std::string_view chunk, uint64_t records, bool duplicate,
                               std::string_view definitions, uint32_t definition_items) = 0;
  // True when the record sink would only count a native stream's records
  // (they are analysed from where the chunks are stored): the decoder then
  // counts them without building them (format::NativeRecordCount) and
  // reports them to on_records_received instead of delivering each.
  virtual bool counts_records_only() const { return false; }
  // Records received: those of a chunk before on_native_chunk, or those a
  // chunk rejected part-way delivered before its bad item. False stops the
  // connection.
  virtual bool on_records_received(uint64_t /*records*/) { return true; }
};

class ConnectionDecoder {
 public:
  // `chunks`, if not null, receives a native stream's checked chunks.
  // `names`: how a native stream's operations are named (operation_name.hpp).
  ConnectionDecoder(std::string peer, format::RecordSink& sink, StoredChunks& stored,
                    NativeChunkSink* chunks = nullptr,
                    format::NameForm names = format::NameForm::kCpp);
  ~ConnectionDecoder();
  ConnectionDecoder(const ConnectionDecoder&) = delete;
  ConnectionDecoder& operator=(const ConnectionDecoder&) = delete;

  // Decodes what is complete. False after a protocol error (the stream
  // cannot be resynchronised) or when the sink asked to stop.
  bool feed(const void* data, size_t size);
  // End of stream: an incomplete frame or chunk is an error.
  bool finish();

  bool failed() const { return !error_.empty(); }
  bool stopped() const { return stopped_; }
  // Names the peer, the stream offset and the reason.
  const std::string& error() const { return error_; }
  uint64_t records() const;
  uint64_t offset() const;  // bytes fully decoded
  // Native streams only: chunks decoded (the count a confirmation carries),
  // and chunks skipped as already stored.
  bool native() const { return native_ != nullptr; }
  uint64_t chunks() const;
  uint64_t duplicate_chunks() const;

 private:
  class NativeStream;
  std::string peer_;
  format::RecordSink& sink_;
  StoredChunks& stored_;
  NativeChunkSink* chunks_;
  format::NameForm names_;
  std::unique_ptr<format::kieker::TcpDecoder> kieker_;
  std::unique_ptr<NativeStream> native_;
  std::string error_;
  bool stopped_ = false;
};

}  // namespace sonde::collect
