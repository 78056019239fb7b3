#include "diagnose/load/http_client.hpp"

#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sonde::diagnose::load {
namespace {

// cpp-httplib reports a failed connection as Error::Connection and keeps no
// error code (its connect() is non-blocking; the reason stays in the
// socket). One plain blocking connect() names it, e.g. "Connection
// refused", which tells a server that is not running from one that is not
// reachable. Only on this error path.
std::string connect_failure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return std::string("cannot resolve ") + host + ": " + gai_strerror(rc);
  }
  std::string reason = "cannot connect";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval limit{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    const int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    const int err = errno;
    ::close(fd);
    if (rc == 0) {
      reason = "cannot connect (the connection failed, then succeeded on a retry)";
      break;
    }
    reason = std::string("cannot connect: ") + std::strerror(err);
  }
  freeaddrinfo(found);
  return reason;
}

// cpp-httplib names its errors in one word; say what failed in the
// driver's terms.
std::string describe(httplib::Error e, const std::string& host, int port) {
  switch (e) {
    case httplib::Error::Connection:
      return connect_failure(host, port);
    case httplib::Error::ConnectionTimeout:
      return "cannot connect: timed out";
    case httplib::Error::Read:
      return "receive failed (timed out, or the connection was closed by the server)";
    case httplib::Error::Write:
      return "send failed (the connection was closed by the server)";
    default:
      return "request failed: " + httplib::to_string(e);
  }
}

}  // namespace

struct HttpConnection::Client {
  explicit Client(const std::string& host, int port) : http(host, port) {}
  httplib::Client http;
};

HttpConnection::HttpConnection(std::string host, int port, int timeout_ms)
    : host_(std::move(host)), port_(port), client_(std::make_unique<Client>(host_, port_)) {
  httplib::Client& c = client_->http;
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  const time_t sec = timeout_ms / 1000;
  const time_t usec = static_cast<time_t>(timeout_ms % 1000) * 1000;
  c.set_connection_timeout(sec, usec);
  c.set_read_timeout(sec, usec);
  c.set_write_timeout(sec, usec);
}

HttpConnection::~HttpConnection() = default;

int HttpConnection::request(const std::string& method, const std::string& target,
                            const std::string& body, std::string& error) {
  httplib::Request req;
  req.method = method;
  req.path = target;
  req.body = body;
  // cpp-httplib reopens a kept-alive connection that the server closed
  // meanwhile before it sends on it.
  httplib::Result res = client_->http.send(req);
  if (!res) {
    error = describe(res.error(), host_, port_) + " (" + host_ + ":" + std::to_string(port_) + ")";
    return 0;
  }
  return res->status;
}

}  // namespace sonde::diagnose::load
