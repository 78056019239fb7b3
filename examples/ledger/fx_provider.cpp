// The external FX rate provider, simulated on its own loopback port: each
// quote is one HTTP request on a fresh connection (HTTP/1.0 style, closed
// after the answer), answered by its own thread after the provider's
// latency. It stands for a remote service, so its latency is a wait.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "ledger.hpp"

namespace ledger {
namespace {

const char* const kCurrencies[] = {"EUR", "USD", "CHF", "GBP"};

double rate_of(const std::string& from, const std::string& to) {
  auto in_eur = [](const std::string& c) {
    if (c == "USD") return 0.92;
    if (c == "CHF") return 1.05;
    if (c == "GBP") return 1.17;
    return 1.0;  // EUR and unknown codes
  };
  return in_eur(from) / in_eur(to);
}

std::string read_until_close_or_head(int fd, bool whole) {
  std::string data;
  char chunk[4096];
  for (;;) {
    if (!whole && data.find("\r\n\r\n") != std::string::npos) break;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(chunk, static_cast<size_t>(n));
  }
  return data;
}

std::string query_value(const std::string& head, const std::string& key) {
  const size_t at = head.find(key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 1;
  const size_t end = head.find_first_of("& \r\n", begin);
  return head.substr(begin, end - begin);
}

}  // namespace

FxProvider::FxProvider(int delay_ms) : delay_ms_(delay_ms) {
  if (::pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (listen_fd_ < 0 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 256) != 0)
    throw std::runtime_error(std::string("FX provider: cannot listen: ") + std::strerror(errno));
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = new std::thread([this] { serve(); });
}

FxProvider::~FxProvider() {
  stopping_ = true;
  const char c = 's';
  [[maybe_unused]] const ssize_t n = ::write(stop_pipe_[1], &c, 1);
  auto* t = static_cast<std::thread*>(thread_);
  t->join();
  delete t;
  // Quotes in flight finish within the provider's latency.
  while (open_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::close(listen_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
}

void FxProvider::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0 || stopping_) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++open_;
    std::thread([this, fd] {
      const std::string head = read_until_close_or_head(fd, false);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));  // the remote's latency
      std::string body;
      if (head.compare(0, 10, "GET /rates") == 0) {
        // The whole table, one "FROM>TO rate" line per pair.
        for (const char* from : kCurrencies)
          for (const char* to : kCurrencies)
            body += std::string(from) + ">" + to + " " + std::to_string(rate_of(from, to)) + "\n";
      } else {
        body = std::to_string(rate_of(query_value(head, "from"), query_value(head, "to")));
      }
      const std::string answer = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body;
      [[maybe_unused]] const ssize_t n = ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(fd);
      --open_;
    }).detach();
  }
}

namespace {

// One GET on a fresh connection; the answer's body.
std::string provider_get(int port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw StoreError(std::string("FX provider: socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw StoreError("FX provider unreachable: " + why);
  }
  const std::string request = "GET " + target + " HTTP/1.0\r\nHost: fx-provider\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    throw StoreError("FX provider: send failed");
  }
  const std::string answer = read_until_close_or_head(fd, true);
  ::close(fd);
  const size_t body = answer.find("\r\n\r\n");
  if (answer.compare(0, 12, "HTTP/1.0 200") != 0 || body == std::string::npos)
    throw StoreError("FX provider: bad answer");
  return answer.substr(body + 4);
}

}  // namespace

double fetch_fx_rate(int port, const std::string& from, const std::string& to) {
  return std::strtod(provider_get(port, "/rate?from=" + from + "&to=" + to).c_str(), nullptr);
}

std::map<std::string, double> fetch_fx_table(int port) {
  std::map<std::string, double> rates;
  const std::string text = provider_get(port, "/rates");
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const size_t space = line.find(' ');
    if (space != std::string::npos)
      rates[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
    begin = end + 1;
  }
  return rates;
}

}  // namespace ledger
