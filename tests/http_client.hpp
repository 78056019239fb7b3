// A minimal HTTP/1.1 client over a real TCP socket, for the tests of every
// layer that talk to an HTTP server (the web API, the example systems):
// they talk to it exactly as a browser would, without linking the server's
// own HTTP library on the client side.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <map>
#include <string>

namespace sonde::test {

struct HttpReply {
  int status = 0;                                   // 0: no connection or no parsable answer
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// A TCP connection to 127.0.0.1:port; -1 when none could be made.
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One response's bytes (status line, headers, body) as an HttpReply;
// status 0 when they hold no complete header block.
inline HttpReply parse_http_reply(const std::string& raw) {
  HttpReply reply;
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos || raw.size() < 12) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  size_t pos = raw.find("\r\n") + 2;
  while (pos < head_end) {
    const size_t eol = raw.find("\r\n", pos);
    const std::string line = raw.substr(pos, eol - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      reply.headers.emplace(name, line.substr(line.find_first_not_of(' ', colon + 1)));
    }
    pos = eol + 2;
  }
  reply.body = raw.substr(head_end + 4);
  return reply;
}

// Sends one request to 127.0.0.1:port; `extra` holds further header lines,
// each ending in "\r\n"; a non-empty `body` goes with its Content-Length.
inline HttpReply http_request(int port, const std::string& method, const std::string& target,
                              const std::string& extra = "",
                              const std::string& host_header = "127.0.0.1",
                              const std::string& body = "") {
  const int fd = connect_loopback(port);
  if (fd < 0) return HttpReply{};
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: " + host_header +
                        "\r\nConnection: close\r\n" + extra;
  if (!body.empty()) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    raw.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return parse_http_reply(raw);
}

inline HttpReply http_get(int port, const std::string& target, const std::string& extra = "") {
  return http_request(port, "GET", target, extra);
}

// POST of an HTML form (`a=1&b=2`).
inline HttpReply http_post_form(int port, const std::string& target, const std::string& form) {
  return http_request(port, "POST", target, "Content-Type: application/x-www-form-urlencoded\r\n",
                      "127.0.0.1", form);
}

}  // namespace sonde::test
