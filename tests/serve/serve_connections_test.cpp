// How the web server holds up under a browser's connection pattern: several
// connections per page, each kept open after its request (HTTP/1.1
// keep-alive), with the next request coming later on the same connection.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "http_get.hpp"
#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

// One kept-alive client connection to 127.0.0.1:port.
class KeptAliveConnection {
 public:
  explicit KeptAliveConnection(int port) : fd_(connect_loopback(port)) {}
  ~KeptAliveConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  KeptAliveConnection(const KeptAliveConnection&) = delete;
  KeptAliveConnection& operator=(const KeptAliveConnection&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Sends a GET without "Connection: close" and reads one whole response
  // (headers and Content-Length bytes), leaving the connection open.
  // Status 0 when the server closed the connection or sent nothing within
  // 30 s.
  int get(const std::string& target) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size()))
      return 0;
    std::string raw;
    HttpReply reply;
    size_t length = 0;
    while (reply.status == 0 || reply.body.size() < length) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) return 0;
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return 0;
      raw.append(buf, static_cast<size_t>(n));
      reply = parse_http_reply(raw);
      if (reply.status != 0) {
        const std::string declared = reply.header("content-length");
        if (declared.empty()) return 0;
        length = std::stoul(declared);
      }
    }
    return reply.status;
  }

 private:
  int fd_;
};

// A browser opens up to six connections to one server and keeps each open
// after its request; two browsers (or one with two profiles) twelve. With
// fewer serving threads than that, the later connections' requests waited
// until an idle one timed out and was closed (cpp-httplib's keep-alive
// timeout, 5 s): every page load of the web UI took 5 s more. So: twelve
// connections, each answered once, and then each still open and answered
// again on the same connection.
TEST(ServeConnections, TwelveKeptAliveConnectionsAreServedAtOnce) {
  store::MemoryStore store(bookstore_log());
  ServeOptions o;
  o.port = 0;
  RunningServer server(store, o);
  ASSERT_GT(server.port(), 0);

  std::vector<std::unique_ptr<KeptAliveConnection>> connections;
  for (int i = 0; i < 12; ++i) {
    connections.push_back(std::make_unique<KeptAliveConnection>(server.port()));
    ASSERT_TRUE(connections.back()->connected()) << i;
    EXPECT_EQ(connections.back()->get("/api/info"), 200) << "first request on connection " << i;
  }
  for (size_t i = 0; i < connections.size(); ++i) {
    EXPECT_EQ(connections[i]->get("/app.js"), 200)
        << "second request on connection " << i << ": the server closed it (0) or refused it";
  }
}

}  // namespace
}  // namespace sonde::serve::test
