#include "monitor/writers/tcp_connect.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sonde::monitor {

int connect_tcp(const std::string& host, uint16_t port, std::string& error) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) {
    error = "not an IPv4 address";
    ::close(fd);
    return -1;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  // A receiver port in the ephemeral range, with nobody listening, can be
  // picked as our own source port: TCP's simultaneous open then connects
  // the socket to itself, and every record would loop back unseen.
  sockaddr_in local{};
  socklen_t local_len = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0 &&
      local.sin_port == sa.sin_port && local.sin_addr.s_addr == sa.sin_addr.s_addr) {
    error = "connected to itself (nobody listens on that port)";
    ::close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  return fd;
}

}  // namespace sonde::monitor
