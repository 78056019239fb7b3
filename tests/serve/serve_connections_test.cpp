// How the web server holds up under a browser's connection pattern: several
// connections per page, each kept open after its request (HTTP/1.1
// keep-alive), with the next request coming later on the same connection.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "serve_test_support.hpp"
#include "store/memory_store.hpp"

namespace sonde::serve::test {
namespace {

// One kept-alive client connection to 127.0.0.1:port.
class KeptAliveConnection {
 public:
  explicit KeptAliveConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~KeptAliveConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  KeptAliveConnection(const KeptAliveConnection&) = delete;
  KeptAliveConnection& operator=(const KeptAliveConnection&) = delete;

  bool connected() const { return fd_ >= 0; }

  // Sends a GET without "Connection: close" and reads one whole response
  // (headers and Content-Length bytes). Returns its status, or 0 when the
  // server closed the connection or sent nothing within 30 s.
  int get(const std::string& target) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size()))
      return 0;
    std::string raw;
    size_t head_end = std::string::npos;
    size_t length = 0;
    while (head_end == std::string::npos || raw.size() < head_end + 4 + length) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 30000) != 1) return 0;
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return 0;
      raw.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos && (head_end = raw.find("\r\n\r\n")) != std::string::npos) {
        const size_t at = raw.find("Content-Length: ");
        if (at == std::string::npos || at > head_end) return 0;
        length = std::stoul(raw.substr(at + 16));
      }
    }
    return raw.size() >= 12 ? std::stoi(raw.substr(9, 3)) : 0;
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
