// Streams sonde's native log over TCP to `sonde collect` (tcp_protocol =
// native, the default). The stream is the native file format itself, chunk
// by chunk, and the receiver confirms how many chunks it has stored. A
// chunk is kept until confirmed, so a collector that restarts or a broken
// connection loses nothing within tcp_buffer_bytes:
//   - on every (re)connection the writer sends a file header and a
//     preamble chunk: the stream id, the number of its first data chunk,
//     and every definition (strings, schemas, threads, operations, clock,
//     process meta) made before that chunk; then the unconfirmed chunks as
//     they were encoded;
//   - the collector skips resent chunks it already stored (same stream id);
//   - beyond the bound, while no receiver is there, the oldest chunks are
//     dropped and their probe events counted as lost, never silently.
// Protocol: docs/formats/native.md, "Streaming over TCP".
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>

#include "format/varint.hpp"
#include "monitor/clock.hpp"
#include "monitor/writers/native_encoding_writer.hpp"
#include "monitor/writers/tcp_connect.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

// Chunks as the native writer produces them, each with what it carried.
class ChunkQueue final : public format::ByteSink {
 public:
  struct Chunk {
    uint64_t number = 0;  // 1, 2, ... over the stream's lifetime
    std::string bytes;
    format::ChunkMark mark;
  };

  bool write(const void* data, size_t size) override {
    open_.append(static_cast<const char*>(data), size);
    return true;
  }
  void end_chunk(const format::ChunkMark& mark) override {
    bytes_ += open_.size();
    chunks_.push_back({++numbered_, std::move(open_), mark});
    open_.clear();
  }

  std::deque<Chunk>& chunks() { return chunks_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t next_number() const { return numbered_ + 1; }
  // Takes the oldest chunk off the queue (confirmed or dropped).
  Chunk pop() {
    Chunk c = std::move(chunks_.front());
    chunks_.pop_front();
    bytes_ -= c.bytes.size();
    return c;
  }

 private:
  std::string open_;  // the chunk being written
  std::deque<Chunk> chunks_;
  uint64_t numbered_ = 0;
  uint64_t bytes_ = 0;
};

class NativeTcpEventWriter final : public NativeEncodingWriter {
 public:
  explicit NativeTcpEventWriter(const Config& config) : config_(config) {}
  ~NativeTcpEventWriter() override { disconnect(); }

  std::string open(const ProcessInfo& p) override {
    in_addr addr{};
    if (inet_pton(AF_INET, config_.tcp_host.c_str(), &addr) != 1) {
      return "tcp_host '" + config_.tcp_host + "' is not an IPv4 address";
    }
    peer_ = config_.tcp_host + ":" + std::to_string(config_.tcp_port);
    stream_id_ = p.hostname + "/" + std::to_string(p.pid) + "/" + std::to_string(p.start_epoch_ns);
    format::NativeWriterOptions options = native_writer_options(config_);
    options.keep_dictionary = true;
    // Smaller chunks than a file's: each is confirmed (and let go of) whole.
    options.chunk_target = 256u << 10;
    writer_ = std::make_unique<format::NativeWriter>(queue_, options);
    write_process_meta(*writer_, p, config_);
    retry_ms_ = config_.tcp_retry_ms;
    if (!connect_now()) {
      std::fprintf(stderr,
                   "sonde: tcp writer: cannot connect to %s (%s); retrying in the background\n",
                   peer_.c_str(), last_error_.c_str());
    }
    return "";
  }

  void flush(bool force) override {
    writer_->flush(force);
    pump();
    make_room();
  }

  void close(uint64_t written, uint64_t lost) override {
    writer_->finish(written, lost);
    // The rest is sent, the sending side closed, and the receiver's last
    // confirmation awaited (it confirms once it has stored everything). A
    // connected receiver is waited for as long as it takes bytes or
    // confirms chunks at least every kStallMs (a slow collector is still a
    // collector); an absent one for tcp_exit_wait_ms, reconnecting.
    int64_t absent_since = now_ms();
    while (!queue_.chunks().empty()) {
      pump();
      if (fd_ >= 0) {
        absent_since = now_ms();
        if (sent_ == queue_.chunks().size()) {
          if (!write_closed_) {
            ::shutdown(fd_, SHUT_WR);
            write_closed_ = true;
          }
          read_confirmations(100);
        }
        if (fd_ >= 0 && now_ms() - last_progress_ms_ >= kStallMs) {
          last_error_ = kStalled;
          lose_connection();
          break;
        }
      } else {
        if (now_ms() - absent_since >= config_.tcp_exit_wait_ms) break;
        usleep(20000);
      }
    }
    if (!queue_.chunks().empty()) {
      uint64_t events = 0;
      for (const auto& c : queue_.chunks()) events += c.mark.probe_events;
      std::fprintf(stderr,
                   "sonde: tcp writer: %zu chunks (%llu events) for %s were not confirmed at "
                   "exit; counted as lost\n",
                   queue_.chunks().size(), static_cast<unsigned long long>(events), peer_.c_str());
      lost_ += events;
    }
    disconnect();
  }

  bool failed() const override { return false; }  // transient by design; losses are counted
  std::string error() const override { return last_error_; }
  std::string location() const override { return "tcp://" + peer_; }
  uint64_t bytes_written() const override { return sent_bytes_; }
  uint64_t events_lost() const override { return lost_; }

 private:
  static int64_t now_ms() { return monotonic_ns_now() / 1000000; }
  // A receiver that neither takes bytes nor confirms chunks for this long
  // is taken as gone (its connection is dropped and a new one tried).
  static constexpr int64_t kStallMs = 60000;
  static constexpr const char* kStalled =
      "the receiver took nothing and confirmed nothing for 60 s";

  bool connect_now() {
    fd_ = connect_tcp(config_.tcp_host, config_.tcp_port, last_error_);
    if (fd_ < 0) return false;
    retry_ms_ = config_.tcp_retry_ms;
    last_progress_ms_ = now_ms();
    sent_ = 0;
    confirmed_ = 0;
    confirm_in_.clear();
    write_closed_ = false;
    if (connections_++ > 0) {
      std::fprintf(stderr, "sonde: tcp writer: reconnected to %s\n", peer_.c_str());
    }
    // The preamble: who this stream is, where it resumes, and every
    // definition made before its first unconfirmed chunk.
    const uint64_t first =
        queue_.chunks().empty() ? queue_.next_number() : queue_.chunks().front().number;
    std::string payload;
    uint32_t items = 0;
    auto meta = [&](std::string_view key, const std::string& value) {
      payload.push_back(static_cast<char>(format::native::Tag::kMeta));
      format::put_str(payload, key);
      format::put_str(payload, value);
      ++items;
    };
    meta("stream.id", stream_id_);
    meta("stream.first_chunk", std::to_string(first));
    payload.append(writer_->dictionary().substr(0, kept_.dictionary_bytes));
    items += kept_.dictionary_items;
    const std::string start =
        format::NativeWriter::file_header() + format::NativeWriter::frame_chunk(payload, items);
    if (!send_bytes(start)) {
      lose_connection();
      return false;
    }
    return true;
  }

  // Sends all of `bytes`. A receiver that is slow (the socket's 5-s send
  // timeout expires) is waited for as long as it takes bytes or confirms
  // chunks at least every kStallMs: back-pressure, not a broken connection.
  bool send_bytes(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
          now_ms() - last_progress_ms_ < kStallMs) {
        if (!read_confirmations(100)) return false;  // it closed (already reported)
        continue;
      }
      if (n <= 0) {
        last_error_ = n == 0                                    ? "connection closed"
                      : errno == EAGAIN || errno == EWOULDBLOCK ? kStalled
                                                                : std::strerror(errno);
        return false;
      }
      bytes.remove_prefix(static_cast<size_t>(n));
      sent_bytes_ += static_cast<uint64_t>(n);
      last_progress_ms_ = now_ms();
    }
    return true;
  }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // The connection broke: unconfirmed chunks stay queued for the next one.
  void lose_connection() {
    if (fd_ < 0) return;  // reported already
    std::fprintf(stderr, "sonde: tcp writer: connection to %s lost (%s); reconnecting\n",
                 peer_.c_str(), last_error_.c_str());
    disconnect();
    next_retry_ms_ = now_ms() + retry_ms_;
  }

  // Sends the chunks not yet sent on this connection, reading confirmations
  // as they come.
  void pump() {
    if (fd_ < 0) {
      const int64_t now = now_ms();
      if (now < next_retry_ms_ || queue_.chunks().empty()) return;
      if (!connect_now()) {
        next_retry_ms_ = now + retry_ms_;
        retry_ms_ = std::min(retry_ms_ * 2, config_.tcp_retry_max_ms);
        return;
      }
    }
    if (!read_confirmations(0)) return;
    auto& chunks = queue_.chunks();
    while (sent_ < chunks.size()) {
      if (!send_bytes(chunks[sent_].bytes)) return lose_connection();
      ++sent_;
    }
  }

  // Reads confirmations for up to `wait_ms`; false if the connection ended.
  bool read_confirmations(int wait_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return true;
    char buf[256];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n == 0 && write_closed_ && queue_.chunks().empty()) {
        disconnect();  // the end of a finished stream: all confirmed
        return false;
      }
      if (n <= 0) {
        last_error_ = n == 0 ? "the receiver closed the connection" : std::strerror(errno);
        lose_connection();
        return false;
      }
      confirm_in_.append(buf, static_cast<size_t>(n));
      while (confirm_in_.size() >= 8) {
        uint64_t count = 0;
        for (int i = 7; i >= 0; --i) count = count << 8 | static_cast<uint8_t>(confirm_in_[i]);
        confirm_in_.erase(0, 8);
        confirmed(count);
      }
    }
  }

  // The receiver stored `count` chunks of this connection, the preamble
  // first: the queue's oldest count - 1 chunks can go.
  void confirmed(uint64_t count) {
    last_progress_ms_ = now_ms();
    while (confirmed_ + 1 < count && sent_ > 0) {
      kept_ = queue_.pop().mark;
      --sent_;
      ++confirmed_;
    }
  }

  // Keeps the queue within tcp_buffer_bytes. With a receiver, wait for its
  // confirmations (back-pressure: the probes' buffers fill and their own
  // policy applies); a receiver that takes and confirms nothing for
  // kStallMs is taken as gone. Without one, the oldest chunks are dropped
  // and counted.
  void make_room() {
    while (queue_.bytes() > config_.tcp_buffer_bytes && queue_.chunks().size() > 1) {
      if (fd_ >= 0 && sent_ > 0 && now_ms() - last_progress_ms_ < kStallMs) {
        read_confirmations(100);
        pump();
        continue;
      }
      if (fd_ >= 0 && sent_ > 0) {
        last_error_ = kStalled;
        lose_connection();
      }
      // Its definitions reach the receiver in the next preamble.
      ChunkQueue::Chunk dropped = queue_.pop();
      if (sent_ > 0) --sent_;
      kept_ = dropped.mark;
      lost_ += dropped.mark.probe_events;
      if (!reported_drop_) {
        reported_drop_ = true;
        std::fprintf(stderr,
                     "sonde: tcp writer: %s has not taken %u bytes; dropping the oldest chunks "
                     "(their events are counted as lost)\n",
                     peer_.c_str(), config_.tcp_buffer_bytes);
      }
    }
  }

  const Config& config_;
  ChunkQueue queue_;
  std::string peer_;
  std::string stream_id_;
  int fd_ = -1;
  size_t sent_ = 0;         // queued chunks sent on this connection (from the front)
  uint64_t confirmed_ = 0;  // of those, confirmed and let go
  std::string confirm_in_;  // bytes of a confirmation not complete yet
  format::ChunkMark kept_;  // mark of the last chunk let go: the preamble's definitions
  bool write_closed_ = false;
  int64_t last_progress_ms_ = 0;  // last byte sent or confirmation read
  std::string last_error_;
  uint32_t retry_ms_ = 500;
  int64_t next_retry_ms_ = 0;
  uint64_t connections_ = 0;
  uint64_t sent_bytes_ = 0;
  uint64_t lost_ = 0;
  bool reported_drop_ = false;
};

}  // namespace

std::unique_ptr<EventWriter> make_native_tcp_writer(const Config& config) {
  return std::make_unique<NativeTcpEventWriter>(config);
}

}  // namespace sonde::monitor
