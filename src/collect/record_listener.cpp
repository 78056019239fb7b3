#include "collect/record_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sonde::collect {

struct RecordListener::Connection {
  int fd = -1;
  size_t client = 0;  // client index (open_clients_)
  std::unique_ptr<ConnectionDecoder> decoder;
  format::RecordSink* sink = nullptr;
  uint64_t confirmed = 0;   // native: chunk count confirmed to the sender
  std::string confirm_out;  // confirmation bytes the socket did not take yet
};

namespace {

std::string peer_name(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

RecordListener::RecordListener(format::RecordSink& sink, ListenerOptions options)
    : sink_(&sink), options_(std::move(options)) {}

RecordListener::RecordListener(ConnectionHandler& handler, ListenerOptions options)
    : handler_(&handler), options_(std::move(options)) {}

RecordListener::~RecordListener() {
  for (auto& c : connections_) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string RecordListener::open() {
  const std::string where = options_.bind_address + ":" + std::to_string(options_.port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options_.port);
  if (inet_pton(AF_INET, options_.bind_address.c_str(), &addr.sin_addr) != 1) {
    return "cannot listen on " + where + ": not an IPv4 address";
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return "cannot create a socket: " + std::string(std::strerror(errno));
  const int yes = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    const std::string reason = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return "cannot listen on " + where + ": " + reason;
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port_ = ntohs(addr.sin_port);
  return "";
}

void RecordListener::accept_new() {
  // At the limit, new connections wait in the kernel's accept queue (and
  // past its end, in their SYN retries): the senders are held back, not
  // refused, until a served connection closes.
  while (connections_.size() < options_.max_connections) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: nothing more; other errors: try again next round
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->client = next_client_++;
    // A node's address is stable while the map grows: the handler may keep it.
    ClientStats& client = open_clients_[c->client];
    client.peer = peer_name(peer);
    c->sink = handler_ ? &handler_->on_open(c->client, client) : sink_;
    c->decoder = std::make_unique<ConnectionDecoder>(
        client.peer, *c->sink, stored_chunks_, handler_ ? handler_->chunk_sink(c->client) : nullptr,
        options_.names);
    connections_.push_back(std::move(c));
    peak_connections_ = std::max(peak_connections_, connections_.size());
  }
}

bool RecordListener::serve(Connection& c) {
  ClientStats& stats = open_clients_.at(c.client);
  char buf[1 << 16];
  // Bounded work per round so one busy sender cannot starve the others,
  // nor hold off the owner's ticks (commits, confirmations): at most 16
  // reads, and at most 64 Ki records (a read of a native stream can hold
  // ten times the records of one of Kieker's).
  const uint64_t records_before = c.decoder->records();
  for (int round = 0; round < 16 && c.decoder->records() - records_before < 65536; ++round) {
    const ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0) {
      stats.error = "read failed: " + std::string(std::strerror(errno));
      return false;
    }
    if (n == 0) {
      if (!c.decoder->finish()) stats.error = c.decoder->error();
      return false;
    }
    stats.bytes += static_cast<uint64_t>(n);
    last_progress_ = std::chrono::steady_clock::now();
    const bool ok = c.decoder->feed(buf, static_cast<size_t>(n));
    stats.records = c.decoder->records();
    stats.protocol = c.decoder->native() ? "native" : "kieker";
    stats.chunks = c.decoder->chunks();
    stats.duplicate_chunks = c.decoder->duplicate_chunks();
    if (options_.confirm_when_decoded || (handler_ && handler_->on_delivered(c.client))) {
      confirm(c);
    }
    if (!ok) {
      if (c.decoder->stopped()) sink_stopped_ = true;
      if (c.decoder->failed()) stats.error = c.decoder->error();
      return false;
    }
  }
  return true;
}

void RecordListener::close_connection(Connection& c) {
  auto it = open_clients_.find(c.client);
  ClientStats& stats = it->second;
  stats.open = false;
  stats.undecoded_bytes = stats.bytes - std::min(stats.bytes, c.decoder->offset());
  ++closed_connections_;
  if (handler_) handler_->on_close(c.client, stats);
  // The handler has stored what arrived: the sender hears how much before
  // the connection goes.
  confirm(c);
  ::close(c.fd);
  c.fd = -1;
  // Only the last listed_closed_clients stay listed; the counts stay in
  // records() (every connection a listener ever accepted was its memory
  // growing with each: about 150 bytes each).
  closed_records_ += stats.records;
  if (!stats.error.empty()) ++closed_with_errors_;
  closed_clients_.emplace_back(c.client, std::move(stats));
  open_clients_.erase(it);
  while (closed_clients_.size() > options_.listed_closed_clients) closed_clients_.pop_front();
}

void RecordListener::confirm(Connection& c) {
  if (!c.decoder->native() || c.fd < 0) return;
  // A sink that stopped did not take the last chunk's records.
  if (c.decoder->stopped() || (handler_ && !handler_->can_confirm())) return;
  const uint64_t chunks = c.decoder->chunks();
  if (chunks > c.confirmed) {
    // Counts are cumulative: a newer one replaces the unsent older ones,
    // but never the rest of one the socket has taken part of (the front).
    c.confirm_out.resize(c.confirm_out.size() % 8);
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(chunks >> (8 * i));
    c.confirm_out.append(bytes, 8);
    c.confirmed = chunks;
  }
  while (!c.confirm_out.empty()) {
    const ssize_t n =
        ::send(c.fd, c.confirm_out.data(), c.confirm_out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // full or gone: the next confirmation carries the count
    c.confirm_out.erase(0, static_cast<size_t>(n));
  }
}

void RecordListener::confirm_stored() {
  for (auto& c : connections_) confirm(*c);
}

void RecordListener::serve_ready(int timeout_ms, bool accept) {
  // A full house does not watch the listening socket (it would stay ready).
  const bool room = accept && connections_.size() < options_.max_connections;
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, static_cast<short>(room ? POLLIN : 0), 0});
  for (const auto& c : connections_) fds.push_back({c->fd, POLLIN, 0});
  const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  if (handler_ && !handler_->on_tick()) sink_stopped_ = true;
  if (ready <= 0) return;  // timeout or EINTR: the caller checks its conditions
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    Connection& c = *connections_[i - 1];
    if (!serve(c)) close_connection(c);
  }
  std::erase_if(connections_, [](const auto& c) { return c->fd < 0; });
  // A connection that just closed frees a slot for one still queued.
  if (accept && connections_.size() < options_.max_connections) accept_new();
}

size_t RecordListener::queued_connections() const {
  // For a listening socket Linux reports its accept queue's length here.
  tcp_info info{};
  socklen_t len = sizeof info;
  if (listen_fd_ < 0 || ::getsockopt(listen_fd_, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return 0;
  return info.tcpi_unacked;
}

void RecordListener::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed) && !sink_stopped_) {
    if (options_.stop_after_connections != 0 &&
        closed_connections_ >= options_.stop_after_connections) {
      // The budget is used up: connections beyond it are not served, but
      // what they already sent is counted, not dropped unseen.
      count_unserved();
      return;
    }
    serve_ready(100, true);
  }
  drain();
}

void RecordListener::drain() {
  // Stopping: what monitored processes sent before the stop is theirs to
  // keep. Read each open connection until its sender closes it, taking
  // queued ones as slots free, while data keeps arriving (drain_idle) and
  // for at most drain_timeout.
  if (!sink_stopped_) accept_new();
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  last_progress_ = start;
  while (!connections_.empty() && !sink_stopped_) {
    const auto now = Clock::now();
    if (now - last_progress_ >= options_.drain_idle || now - start >= options_.drain_timeout) break;
    serve_ready(100, true);
  }
  count_unserved();
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  for (auto& c : connections_) {
    // Still open (a sender that keeps sending, a stalled one, or a stopped
    // sink): what already arrived but was not read is counted, and the cut
    // is recorded, never silent.
    int pending = 0;
    ClientStats& stats = open_clients_.at(c->client);
    if (::ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0) {
      stats.bytes += static_cast<uint64_t>(pending);
    }
    if (stats.error.empty() && !sink_stopped_) {
      stats.error = "cut when the collector stopped, after draining for " + std::to_string(waited) +
                    " ms; what the sender still had in flight is lost";
    }
    close_connection(*c);
  }
  connections_.clear();
}

void RecordListener::count_unserved() {
  // Connections still queued when serving ends were never read: their bytes
  // already in the kernel are counted, then they are closed.
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    int pending = 0;
    if (::ioctl(fd, FIONREAD, &pending) == 0 && pending > 0) {
      unserved_bytes_ += static_cast<uint64_t>(pending);
    }
    ++unserved_connections_;
    ::close(fd);
  }
}

uint64_t RecordListener::records() const {
  uint64_t total = closed_records_;
  for (const auto& [client, stats] : open_clients_) total += stats.records;
  return total;
}

std::vector<ClientStats> RecordListener::clients() const {
  std::vector<std::pair<size_t, const ClientStats*>> listed;
  for (const auto& [client, stats] : closed_clients_) listed.emplace_back(client, &stats);
  for (const auto& [client, stats] : open_clients_) listed.emplace_back(client, &stats);
  std::sort(listed.begin(), listed.end());
  std::vector<ClientStats> out;
  out.reserve(listed.size());
  for (const auto& [client, stats] : listed) out.push_back(*stats);
  return out;
}

const ClientStats* RecordListener::open_client(size_t client) const {
  auto it = open_clients_.find(client);
  return it == open_clients_.end() ? nullptr : &it->second;
}

}  // namespace sonde::collect
