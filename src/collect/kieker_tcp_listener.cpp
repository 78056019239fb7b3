#include "collect/kieker_tcp_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "format/kieker_tcp.hpp"

namespace sonde::collect {

struct KiekerTcpListener::Connection {
  int fd = -1;
  size_t client = 0;  // index into clients_
  std::unique_ptr<format::kieker::TcpDecoder> decoder;
  format::RecordSink* sink = nullptr;
};

namespace {

std::string peer_name(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(ntohs(a.sin_port));
}

}  // namespace

KiekerTcpListener::KiekerTcpListener(format::RecordSink& sink, ListenerOptions options)
    : sink_(&sink), options_(std::move(options)) {}

KiekerTcpListener::KiekerTcpListener(ConnectionHandler& handler, ListenerOptions options)
    : handler_(&handler), options_(std::move(options)) {}

KiekerTcpListener::~KiekerTcpListener() {
  for (auto& c : connections_) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string KiekerTcpListener::open() {
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

void KiekerTcpListener::accept_new() {
  for (;;) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN: nothing more; other errors: try again next round
    if (connections_.size() >= options_.max_connections) {
      ++rejected_connections_;
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->client = clients_.size();
    ClientStats client;
    client.peer = peer_name(peer);
    clients_.push_back(std::move(client));
    c->decoder = std::make_unique<format::kieker::TcpDecoder>(clients_.back().peer);
    c->sink = handler_ ? &handler_->on_open(c->client, clients_.back()) : sink_;
    connections_.push_back(std::move(c));
    peak_connections_ = std::max(peak_connections_, connections_.size());
  }
}

bool KiekerTcpListener::serve(Connection& c) {
  ClientStats& stats = clients_[c.client];
  char buf[1 << 16];
  // Bounded reads per round so one busy sender cannot starve the others.
  for (int round = 0; round < 16; ++round) {
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
    const bool ok = c.decoder->feed(buf, static_cast<size_t>(n), *c.sink);
    stats.records = c.decoder->records();
    if (!ok) {
      if (c.decoder->stopped()) sink_stopped_ = true;
      if (c.decoder->failed()) stats.error = c.decoder->error();
      return false;
    }
  }
  return true;
}

void KiekerTcpListener::close_connection(Connection& c) {
  ::close(c.fd);
  c.fd = -1;
  ClientStats& stats = clients_[c.client];
  stats.open = false;
  stats.undecoded_bytes = stats.bytes - std::min(stats.bytes, c.decoder->offset());
  ++closed_connections_;
  if (handler_) handler_->on_close(c.client, stats);
}

void KiekerTcpListener::run(const std::atomic<bool>& stop) {
  std::vector<pollfd> fds;
  while (!stop.load(std::memory_order_relaxed) && !sink_stopped_) {
    if (options_.stop_after_connections != 0 &&
        closed_connections_ >= options_.stop_after_connections) {
      return;
    }
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : connections_) fds.push_back({c->fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 100);
    if (handler_ && !handler_->on_tick()) sink_stopped_ = true;
    if (ready <= 0) continue;  // timeout or EINTR: check stop
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Connection& c = *connections_[i - 1];
      if (!serve(c)) close_connection(c);
    }
    std::erase_if(connections_, [](const auto& c) { return c->fd < 0; });
    if (fds[0].revents & POLLIN) accept_new();
  }
  // Stopping: take what the senders already sent, so a stop right after
  // they finished does not lose their last records.
  for (auto& c : connections_) {
    if (!sink_stopped_) serve(*c);
    close_connection(*c);
  }
  connections_.clear();
}

uint64_t KiekerTcpListener::records() const {
  uint64_t total = 0;
  for (const ClientStats& c : clients_) total += c.records;
  return total;
}

}  // namespace sonde::collect
