// The event loop: one thread accepts, reads and writes every connection
// with epoll (level-triggered, non-blocking sockets), hands each complete
// request to the worker pool and writes the answers the workers post back
// through an eventfd. A connection has at most one request in the pool;
// requests it pipelines wait in its buffer until the answer is written. A
// client that half-closes still gets the answers to what it sent.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "http_message.hpp"

namespace tickets {
namespace {

// epoll_event.data.u64 of the loop's own descriptors; connections count up
// from 16.
constexpr std::uint64_t kListen = 1;
constexpr std::uint64_t kWake = 2;
constexpr std::uint64_t kStop = 3;
constexpr std::uint64_t kFlushTimer = 4;

// The eventfd a stop signal writes to, and the flag for a signal that came
// before the loop had one (both async-signal-safe: lock-free atomics).
std::atomic<int> g_stop_fd{-1};
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

bool watch_fd(int epoll_fd, int fd, std::uint64_t id, std::uint32_t events) {
  epoll_event e{};
  e.events = events;
  e.data.u64 = id;
  return ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e) == 0;
}

void add(int epoll_fd, int fd, std::uint64_t id, std::uint32_t events) {
  if (!watch_fd(epoll_fd, fd, id, events)) fail("epoll_ctl");
}

void drain_counter(int fd) {
  std::uint64_t value = 0;
  while (::read(fd, &value, sizeof value) > 0) {
  }
}

}  // namespace

struct EventLoop::Connection {
  std::uint64_t id = 0;
  int fd = -1;
  std::string in;
  std::string out;
  bool busy = false;         // a request of it is in the pool
  bool close_after = false;  // close once `out` is written and nothing is in the pool
  bool reading = true;       // EPOLLIN is watched: more requests may come
  bool writing = false;      // EPOLLOUT is watched
  int pending_error = 0;     // 400 or 413 to answer once nothing is in the pool
};

EventLoop::EventLoop(int port, bool write_coalescing, int flush_interval_ms)
    : write_coalescing_(write_coalescing) {
  try {
    open(port, flush_interval_ms);
  } catch (...) {
    const int stop_fd = g_stop_fd.exchange(-1);
    for (int fd : {listen_fd_, epoll_fd_, wake_fd_, timer_fd_, stop_fd})
      if (fd >= 0) ::close(fd);
    throw;
  }
}

void EventLoop::open(int port, int flush_interval_ms) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("socket");
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    fail("cannot listen on 127.0.0.1:" + std::to_string(port));
  if (::listen(listen_fd_, 256) != 0) fail("listen");
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);

  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  const int stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  g_stop_fd.store(stop_fd);  // closed with the loop, or by the constructor's cleanup
  if (epoll_fd_ < 0 || wake_fd_ < 0 || stop_fd < 0) fail("epoll or eventfd");
  add(epoll_fd_, listen_fd_, kListen, EPOLLIN);
  add(epoll_fd_, wake_fd_, kWake, EPOLLIN);
  add(epoll_fd_, stop_fd, kStop, EPOLLIN);
  if (write_coalescing_) {
    // Answers wait for the next tick of a fixed-rate timer, whatever else
    // wakes the loop: writes are coalesced, every answer waits up to a tick.
    timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (timer_fd_ < 0) fail("timerfd_create");
    itimerspec tick{};
    tick.it_interval.tv_sec = flush_interval_ms / 1000;
    tick.it_interval.tv_nsec = static_cast<long>(flush_interval_ms % 1000) * 1000000L;
    tick.it_value = tick.it_interval;
    if (::timerfd_settime(timer_fd_, 0, &tick, nullptr) != 0) fail("timerfd_settime");
    add(epoll_fd_, timer_fd_, kFlushTimer, EPOLLIN);
  }
}

EventLoop::~EventLoop() {
  while (!connections_.empty()) close_connection(connections_.begin()->first);
  const int stop_fd = g_stop_fd.exchange(-1);
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_, timer_fd_, stop_fd})
    if (fd >= 0) ::close(fd);
}

void EventLoop::request_stop() {
  g_stop_requested.store(true);
  const int fd = g_stop_fd.load();
  const std::uint64_t one = 1;
  if (fd >= 0 && ::write(fd, &one, sizeof one) < 0) {
    // Nothing more a signal handler can do.
  }
}

void EventLoop::complete(std::uint64_t connection, std::string bytes) {
  {
    std::lock_guard lock(completed_mutex_);
    completed_.emplace_back(connection, std::move(bytes));
  }
  if (!write_coalescing_) {
    const std::uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof one) < 0) {
      // The counter cannot overflow at one per answer; the loop drains it.
    }
  }
}

void EventLoop::run(WorkerPool& pool) {
  epoll_event events[64];
  while (!g_stop_requested.load()) {
    // Accepting paused (out of descriptors, say): try again every 100 ms.
    const int n = ::epoll_wait(epoll_fd_, events, 64, accepting_ ? -1 : 100);
    if (!accepting_ && watch_fd(epoll_fd_, listen_fd_, kListen, EPOLLIN)) accepting_ = true;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait");
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[i].data.u64;
      if (id == kStop) return;
      if (id == kListen) {
        accept_all();
      } else if (id == kWake) {
        drain_counter(wake_fd_);
        drain_completions(pool);
      } else if (id == kFlushTimer) {
        drain_counter(timer_fd_);
        drain_completions(pool);
      } else {
        const auto it = connections_.find(id);
        if (it == connections_.end()) continue;
        Connection& c = *it->second;
        const std::uint32_t happened = events[i].events;
        // Each step returns false once it has closed the connection.
        if ((happened & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0 && !c.out.empty() && !flush(c))
          continue;
        if (c.reading && (happened & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) != 0 &&
            !read_from(c))
          continue;
        if (dispatch(c, pool)) finish_if_done(c);
      }
    }
  }
}

void EventLoop::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // Out of descriptors or memory: stop listening for a while (else the
        // waiting connection would wake the level-triggered loop forever).
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accepting_ = false;
      }
      return;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->id = next_id_++;
    c->fd = fd;
    if (!watch_fd(epoll_fd_, fd, c->id, EPOLLIN | EPOLLRDHUP)) {
      ::close(fd);
      continue;
    }
    connections_.emplace(c->id, std::move(c));
  }
}

bool EventLoop::read_from(Connection& c) {
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      c.in.append(buffer, static_cast<std::size_t>(n));
      if (c.in.size() > kMaxHead + kMaxBody) {
        // More than any request may be: 413 once the request in the pool
        // (if one is) is answered, and the connection ends.
        c.in.clear();
        c.pending_error = 413;
        stop_reading(c);
        return true;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n == 0) {
      stop_reading(c);  // the peer sent all it will: answer it, then close
      return true;
    }
    close_connection(c.id);  // reset or failed: nothing can be written
    return false;
  }
}

void EventLoop::stop_reading(Connection& c) {
  c.reading = false;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  c.writing = false;
  if (!c.out.empty()) watch(c, true);
}

bool EventLoop::dispatch(Connection& c, WorkerPool& pool) {
  // One request at a time, and the next only once the last answer is sent
  // (a client that pipelines and never reads must not grow `out`).
  if (c.busy || c.close_after || !c.out.empty()) return true;
  if (c.pending_error == 0) {
    // A stray CRLF between requests (some clients send one after a body).
    std::size_t blank = 0;
    while (blank + 1 < c.in.size() && c.in[blank] == '\r' && c.in[blank + 1] == '\n') blank += 2;
    c.in.erase(0, blank);
    Request request;
    std::size_t consumed = 0;
    const Parse result = parse_request(c.in, request, consumed);
    if (result == Parse::kIncomplete) return true;
    if (result == Parse::kRequest) {
      c.in.erase(0, consumed);
      c.busy = true;
      if (!request.keep_alive) c.close_after = true;
      pool.submit(Job{c.id, std::move(request)});
      return true;
    }
    c.pending_error = result == Parse::kTooLarge ? 413 : 400;
  }
  c.out += http_bytes(
      error_response(c.pending_error, c.pending_error == 413 ? "request too large" : "bad request"),
      false);
  c.pending_error = 0;
  c.close_after = true;
  c.in.clear();
  if (c.reading) stop_reading(c);
  return flush(c);
}

void EventLoop::drain_completions(WorkerPool& pool) {
  std::vector<std::pair<std::uint64_t, std::string>> done;
  {
    std::lock_guard lock(completed_mutex_);
    done.swap(completed_);
  }
  for (auto& [id, bytes] : done) {
    const auto it = connections_.find(id);
    if (it == connections_.end()) continue;  // the client went away meanwhile
    Connection& c = *it->second;
    if (bytes.empty()) {  // the worker could not answer at all: give up on the connection
      close_connection(id);
      continue;
    }
    c.busy = false;
    c.out += bytes;
    if (flush(c) && dispatch(c, pool)) finish_if_done(c);  // then a pipelined request
  }
}

bool EventLoop::flush(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      watch(c, true);
      return true;
    }
    close_connection(c.id);  // the peer is gone
    return false;
  }
  watch(c, false);
  return true;
}

// A connection that owes nothing and gets no more requests is closed.
void EventLoop::finish_if_done(Connection& c) {
  if (!c.busy && c.out.empty() && (c.close_after || !c.reading)) close_connection(c.id);
}

void EventLoop::watch(Connection& c, bool want_write) {
  epoll_event e{};
  e.data.u64 = c.id;
  if (!c.reading) {
    // Only the rest of the answer is still of interest.
    e.events = EPOLLOUT;
    if (want_write && !c.writing) ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c.fd, &e);
    if (!want_write && c.writing) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  } else if (want_write != c.writing) {
    e.events = EPOLLIN | EPOLLRDHUP | (want_write ? EPOLLOUT : 0u);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &e);
  }
  c.writing = want_write;
}

void EventLoop::close_connection(std::uint64_t id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  const int fd = it->second->fd;
  // Unread bytes at close make the kernel reset the connection, which can
  // cost the client the last answer (a 413 sent before its body arrived):
  // end the sending side first and discard what has already come in.
  ::shutdown(fd, SHUT_WR);
  char discard[4096];
  for (int i = 0; i < 16 && ::recv(fd, discard, sizeof discard, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(fd);  // also leaves the epoll set
  connections_.erase(it);
  if (!accepting_ && watch_fd(epoll_fd_, listen_fd_, kListen, EPOLLIN)) accepting_ = true;
}

}  // namespace tickets
