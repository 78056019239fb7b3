// Hand-driven Kieker TCP clients for the collector tests: a log encoded as
// one connection's stream, and blocking loopback connect/send.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <string_view>

#include "format/kieker_tcp.hpp"
#include "format/record.hpp"

namespace sonde::collect {

class Encoder final : public format::RecordSink {
 public:
  bool on_record(const format::Record& r) override {
    encoder_.encode(r, bytes);
    ++records;
    return true;
  }
  std::string bytes;
  uint64_t records = 0;

 private:
  format::kieker::TcpEncoder encoder_;
};

inline int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Sends everything, or stops quietly when the peer closed (returns false).
inline bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace sonde::collect
