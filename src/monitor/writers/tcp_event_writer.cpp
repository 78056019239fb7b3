// Streams Kieker's TCP frame protocol to a receiver (Kieker's collector or
// `sonde collect`; tcp_protocol = kieker). While the peer is away the writer keeps the records
// (up to tcp_buffer_bytes) and reconnects with exponential back-off; what
// does not fit is counted as lost, never dropped silently. Each connection
// gets a fresh string registry, so waiting records are encoded per connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

#include "format/kieker_tcp.hpp"
#include "monitor/writers/kieker_records.hpp"
#include "monitor/writers/tcp_connect.hpp"
#include "monitor/writers/writer_factories.hpp"

namespace sonde::monitor {
namespace {

class TcpEventWriter final : public EventWriter {
 public:
  explicit TcpEventWriter(const Config& config)
      : config_(config), records_([this](const format::Record& r) { return send_record(r); }) {}
  ~TcpEventWriter() override { disconnect(); }

  std::string open(const ProcessInfo& p) override {
    in_addr addr{};
    if (inet_pton(AF_INET, config_.tcp_host.c_str(), &addr) != 1) {
      return "tcp_host '" + config_.tcp_host + "' is not an IPv4 address";
    }
    peer_ = config_.tcp_host + ":" + std::to_string(config_.tcp_port);
    retry_ms_ = config_.tcp_retry_ms;
    if (!connect_now()) {
      std::fprintf(stderr,
                   "sonde: tcp writer: cannot connect to %s (%s); retrying in the background\n",
                   peer_.c_str(), last_error_.c_str());
    }
    records_.start(p, p.start_epoch_ns);
    return "";
  }
  void operation(const OperationInfo& op) override { records_.operation(op); }
  void thread(const ThreadInfo& t) override { records_.thread(t); }
  void events(uint32_t thread, const DecodedEvent* e, size_t n) override {
    lost_ += records_.events(e, n, thread);
  }
  void record(const format::Record& r) override { records_.record(r); }
  void clock(const Calibration& c) override { records_.clock(c); }
  void loss(uint32_t, uint64_t, std::string_view) override {}
  void flush(bool) override { pump(); }
  void close(uint64_t, uint64_t) override {
    pump();
    // Give a briefly absent peer one last chance before exit.
    for (int i = 0; i < 20 && !pending_.empty(); ++i) {
      usleep(50000);
      pump();
    }
    if (!pending_.empty()) {
      uint64_t events = 0;
      for (const format::Record& r : pending_) events += is_probe_event(r) ? 1 : 0;
      std::fprintf(stderr, "sonde: tcp writer: %zu records for %s could not be sent at exit\n",
                   pending_.size(), peer_.c_str());
      lost_ += events;
    }
    disconnect();
  }
  bool failed() const override { return false; }  // transient by design; losses are counted
  std::string error() const override { return last_error_; }
  std::string location() const override { return "tcp://" + peer_; }
  uint64_t bytes_written() const override { return sent_; }
  uint64_t events_lost() const override { return lost_; }

 private:
  static bool is_probe_event(const format::Record& r) {
    const std::string& c = r.schema->class_name;
    return c.find("OperationEvent") != std::string::npos ||
           c.find("OperationFailedEvent") != std::string::npos;
  }

  // Records wait here, not their frames: a frame depends on the string ids
  // its connection has seen, so every record is encoded for the connection
  // that actually sends it.
  bool send_record(const format::Record& r) {
    if (pending_.size() >= max_pending()) {
      pump();
      if (pending_.size() >= max_pending()) return false;  // counted by the caller
    }
    pending_.push_back(r);
    if (pending_.size() >= 4096) pump();
    return true;
  }

  // tcp_buffer_bytes bounds the backlog; a flow record is ~40 bytes on the wire.
  size_t max_pending() const { return std::max<size_t>(1024, config_.tcp_buffer_bytes / 40); }

  bool connect_now() {
    fd_ = connect_tcp(config_.tcp_host, config_.tcp_port, last_error_);
    if (fd_ < 0) return false;
    retry_ms_ = config_.tcp_retry_ms;
    encoder_ = format::kieker::TcpEncoder();  // the new peer knows no strings yet
    if (reconnects_++ > 0) {
      std::fprintf(stderr, "sonde: tcp writer: reconnected to %s\n", peer_.c_str());
    }
    return true;
  }

  void fail(const char* why) { last_error_ = why; }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Encodes a batch, sends it and removes the records whose frames were
  // sent completely. After a broken connection the rest stay pending and are
  // encoded again for the next one.
  void pump() {
    while (!pending_.empty()) {
      int64_t now = monotonic_ns_now() / 1000000;
      if (fd_ < 0) {
        if (now < next_retry_ms_) return;
        if (!connect_now()) {
          next_retry_ms_ = now + retry_ms_;
          retry_ms_ = std::min(retry_ms_ * 2, config_.tcp_retry_max_ms);
          return;
        }
      }
      wire_.clear();
      ends_.clear();
      for (size_t i = 0; i < pending_.size() && wire_.size() < 256 * 1024; ++i) {
        encoder_.encode(pending_[i], wire_);
        ends_.push_back(wire_.size());
      }
      size_t sent = 0;
      while (sent < wire_.size()) {
        ssize_t n = ::send(fd_, wire_.data() + sent, wire_.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      sent_ += sent;
      size_t done = 0;
      while (done < ends_.size() && ends_[done] <= sent) ++done;
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
      if (sent < wire_.size()) {
        fail(std::strerror(errno));
        std::fprintf(stderr, "sonde: tcp writer: connection to %s lost (%s); reconnecting\n",
                     peer_.c_str(), last_error_.c_str());
        disconnect();
        next_retry_ms_ = now + retry_ms_;
        return;
      }
    }
  }

  const Config& config_;
  KiekerRecords records_;
  format::kieker::TcpEncoder encoder_;
  std::deque<format::Record> pending_;
  std::string wire_;
  std::vector<size_t> ends_;
  int fd_ = -1;
  std::string peer_;
  std::string last_error_;
  uint32_t retry_ms_ = 500;
  int64_t next_retry_ms_ = 0;
  uint64_t reconnects_ = 0;
  uint64_t sent_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace

std::unique_ptr<EventWriter> make_kieker_tcp_writer(const Config& config) {
  return std::make_unique<TcpEventWriter>(config);
}

}  // namespace sonde::monitor
