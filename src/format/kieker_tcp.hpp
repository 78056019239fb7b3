// Kieker's single-socket TCP protocol (SingleSocketTcpWriter, anchor §1.4):
// one byte stream interleaving two big-endian frame kinds,
//   registry frame: int32 -1, int32 id, int32 length, `length` UTF-8 bytes
//   record frame:   int32 classNameStringId, int64 loggingTimestamp, payload
// where the payload is laid out as in .bin and string ids refer to the
// registry frames sent earlier on the same connection. The length field is
// a byte count, as Kieker's reader assumes (Kieker's writer puts UTF-16
// units there, which disagrees for non-ASCII strings). No sockets here.
#pragma once

#include <cstdint>
#include <string>

#include "format/kieker_map.hpp"
#include "format/record.hpp"

namespace sonde::format::kieker {

inline constexpr int32_t kRegistryFrameTag = -1;
// Frames larger than this are treated as a corrupt stream, not buffered.
inline constexpr size_t kMaxTcpFrame = size_t{16} << 20;

// One encoder per connection: string ids are per connection.
class TcpEncoder {
 public:
  // Appends registry frames for strings this connection has not seen, then
  // the record frame, so the receiver always knows an id before its use.
  void encode(const Record& r, std::string& out);
  int32_t strings() const { return registry_.size(); }

 private:
  WriterRegistry registry_;
  std::string record_;
};

// One decoder per connection; accepts the stream in arbitrary pieces.
class TcpDecoder {
 public:
  explicit TcpDecoder(std::string peer = "tcp") : peer_(std::move(peer)) {}
  TcpDecoder(const TcpDecoder&) = delete;
  TcpDecoder& operator=(const TcpDecoder&) = delete;

  // Decodes all complete frames. Returns false after a protocol error (the
  // connection cannot be resynchronised and should be closed) or when the
  // sink asked to stop.
  bool feed(const void* data, size_t size, RecordSink& sink);
  // Call at end of stream: an incomplete last frame is a protocol error.
  bool finish();

  bool failed() const { return !error_.empty(); }
  bool stopped() const { return stopped_; }
  // Names the peer, the stream offset and the reason.
  const std::string& error() const { return error_; }
  uint64_t records() const { return records_; }
  uint64_t offset() const { return base_offset_ + pos_; }  // bytes fully decoded
  size_t pending() const { return buf_.size() - pos_; }    // bytes of an incomplete frame
  const ReaderRegistry& registry() const { return registry_; }

 private:
  enum class Step { kDone, kNeedMore, kStop };
  Step frame(RecordSink& sink);
  void fail(uint64_t at, const std::string& reason);

  std::string peer_;
  StringPool pool_;
  ReaderRegistry registry_{pool_};
  std::string buf_;
  size_t pos_ = 0;
  uint64_t base_offset_ = 0;
  uint64_t records_ = 0;
  std::string error_;
  bool stopped_ = false;
  Record record_;
  std::string detail_;
};

}  // namespace sonde::format::kieker
