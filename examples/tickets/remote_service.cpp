// The external services (fraud screening, payment authorization), each
// simulated on its own loopback UDP port and thread: it answers each
// datagram after its delay, all
// requests concurrently (a timer queue, not one request after another), as
// a remote service with that latency would.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <queue>
#include <stdexcept>
#include <string>

#include "tickets.hpp"

namespace tickets {
namespace {

using Clock = std::chrono::steady_clock;

struct Pending {
  Clock::time_point due;
  sockaddr_in from{};
  std::string payload;
  bool operator>(const Pending& other) const { return due > other.due; }
};

}  // namespace

RemoteService::RemoteService(int delay_ms) : delay_ms_(delay_ms) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd_ < 0 || stop_fd_ < 0 ||
      ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    if (stop_fd_ >= 0) ::close(stop_fd_);
    throw std::runtime_error("remote service: cannot open its loopback UDP port: " + reason);
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

RemoteService::~RemoteService() {
  const std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) < 0) {
    // The thread cannot be told to stop; nothing else would help here.
  }
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
  ::close(stop_fd_);
}

void RemoteService::serve() {
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> due;
  for (;;) {
    int timeout_ms = -1;
    if (!due.empty()) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(due.top().due - Clock::now());
      timeout_ms = wait.count() < 0 ? 0 : static_cast<int>(wait.count());
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      // Out of kernel memory, say: the service is slow for a moment, not gone.
      std::cerr << "tickets: remote service: poll: " << std::strerror(errno) << "\n";
      ::usleep(1000);
      continue;
    }
    if ((fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) != 0) {
      char buffer[512];
      Pending p;
      socklen_t length = sizeof p.from;
      const ssize_t n = ::recvfrom(fd_, buffer, sizeof buffer, MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&p.from), &length);
      if (n > 0) {
        p.payload.assign(buffer, static_cast<std::size_t>(n));
        p.due = Clock::now() + std::chrono::milliseconds(delay_ms_);
        due.push(std::move(p));
      }
    }
    while (!due.empty() && due.top().due <= Clock::now()) {
      const Pending& p = due.top();
      const std::string answer = "ok " + p.payload;
      if (::sendto(fd_, answer.data(), answer.size(), 0, reinterpret_cast<const sockaddr*>(&p.from),
                   sizeof p.from) < 0) {
        // The asking worker gives up after its timeout and answers 503.
      }
      due.pop();
    }
  }
}

bool ask_remote(int port, std::int64_t order_ref, const std::string& customer) {
  // One socket per worker thread, reused: a real client keeps its socket.
  struct Socket {
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ~Socket() {
      if (fd >= 0) ::close(fd);
    }
  };
  thread_local Socket s;
  if (s.fd < 0) return false;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  const std::string question = std::to_string(order_ref) + " " + customer;
  if (::sendto(s.fd, question.data(), question.size(), 0, reinterpret_cast<sockaddr*>(&to),
               sizeof to) < 0)
    return false;
  // Answers to earlier questions that timed out may still arrive: wait for
  // the one that names this order.
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  char buffer[512];
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{s.fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::recv(s.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0 && std::string(buffer, static_cast<std::size_t>(n)) == "ok " + question) return true;
  }
}

}  // namespace tickets
