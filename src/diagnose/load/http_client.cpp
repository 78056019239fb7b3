#include "diagnose/load/http_client.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <strings.h>

namespace sonde::diagnose::load {

HttpConnection::HttpConnection(std::string host, int port, int timeout_ms)
    : host_(std::move(host)), port_(port), timeout_ms_(timeout_ms) {}

HttpConnection::~HttpConnection() { close_socket(); }

void HttpConnection::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

bool HttpConnection::connect_socket(std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
  if (rc != 0) {
    error = "cannot resolve " + host_ + ": " + gai_strerror(rc);
    return false;
  }
  for (addrinfo* a = found; a; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd_ < 0) continue;
    timeval tv{timeout_ms_ / 1000, (timeout_ms_ % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, a->ai_addr, a->ai_addrlen) == 0) break;
    error = "cannot connect to " + host_ + ":" + std::to_string(port_) + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
  freeaddrinfo(found);
  return fd_ >= 0;
}

bool HttpConnection::send_all(const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

int HttpConnection::request(const std::string& method, const std::string& target, const std::string& body,
                            std::string& error) {
  std::string message = method + " " + target + " HTTP/1.1\r\nHost: " + host_ + ":" + std::to_string(port_) +
                        "\r\nConnection: keep-alive\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    message += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  message += "\r\n" + body;
  // A kept-alive connection the server closed meanwhile fails on first use:
  // retry once on a fresh connection before calling it an error.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = fd_ >= 0;
    if (fd_ < 0 && !connect_socket(error)) return 0;
    if (send_all(message)) {
      const int status = read_response(error);
      if (status > 0) return status;
    } else {
      error = std::string("send failed: ") + std::strerror(errno);
    }
    close_socket();
    if (!reused) return 0;
  }
  return 0;
}

// Reads status line, headers and a Content-Length or chunked body.
int HttpConnection::read_response(std::string& error) {
  auto fill = [&]() -> bool {
    char chunk[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n == 0 ? "connection closed by server" : std::string("receive failed: ") + std::strerror(errno);
        return false;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  };
  std::size_t header_end;
  while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return 0;
  const std::string head = buffer_.substr(0, header_end);
  buffer_.erase(0, header_end + 4);
  int status = 0;
  if (std::sscanf(head.c_str(), "HTTP/1.%*d %d", &status) != 1 || status <= 0) {
    error = "malformed status line";
    return 0;
  }
  long long length = -1;
  bool chunked = false, close_after = false;
  std::size_t line_start = head.find("\r\n");
  while (line_start != std::string::npos) {
    line_start += 2;
    const std::size_t line_end = head.find("\r\n", line_start);
    const std::string line = head.substr(line_start, line_end - line_start);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      const std::string name = line.substr(0, colon);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (strcasecmp(name.c_str(), "Content-Length") == 0) length = std::atoll(value.c_str());
      if (strcasecmp(name.c_str(), "Transfer-Encoding") == 0 && strcasecmp(value.c_str(), "chunked") == 0) chunked = true;
      if (strcasecmp(name.c_str(), "Connection") == 0 && strcasecmp(value.c_str(), "close") == 0) close_after = true;
    }
    line_start = line_end;
  }
  if (chunked) {
    for (;;) {
      std::size_t eol;
      while ((eol = buffer_.find("\r\n")) == std::string::npos)
        if (!fill()) return 0;
      const long long size = std::strtoll(buffer_.c_str(), nullptr, 16);
      buffer_.erase(0, eol + 2);
      while (buffer_.size() < static_cast<std::size_t>(size) + 2)
        if (!fill()) return 0;
      buffer_.erase(0, static_cast<std::size_t>(size) + 2);
      if (size == 0) break;
    }
  } else if (length >= 0) {
    while (buffer_.size() < static_cast<std::size_t>(length))
      if (!fill()) return 0;
    buffer_.erase(0, static_cast<std::size_t>(length));
  } else {
    // No length: the body ends when the server closes.
    while (fill()) {
    }
    close_after = true;
  }
  if (close_after) close_socket();
  return status;
}

}  // namespace sonde::diagnose::load
