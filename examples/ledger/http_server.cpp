// HTTP/1.1 on raw POSIX sockets: the main thread accepts, each accepted
// connection gets its own thread that reads its keep-alive requests one
// after the other (thread per connection). Bodies need a Content-Length
// (no chunked requests); responses always carry one.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "ledger.hpp"

namespace ledger {
namespace {

int g_stop_pipe[2] = {-1, -1};
volatile sig_atomic_t g_stop_requested = 0;  // a stop before the pipe existed

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void parse_pairs(const std::string& text, std::map<std::string, std::string>& out) {
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('&', begin);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(begin, end - begin);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      if (eq == std::string::npos)
        out[url_decode(pair)] = "";
      else
        out[url_decode(pair.substr(0, eq))] = url_decode(pair.substr(eq + 1));
    }
    begin = end + 1;
  }
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 422:
      return "Unprocessable Entity";
    default:
      return status >= 500 ? "Internal Server Error" : "Error";
  }
}

bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Open connections and their threads, so that a stop can close them.
// Threads of closed connections are joined at the next accept.
struct Connections {
  std::mutex mutex;
  std::set<int> fds;
  std::map<uint64_t, std::thread> threads;
  std::vector<uint64_t> finished;
};
Connections g_connections;

constexpr size_t kMaxHeader = 16 * 1024;
constexpr size_t kMaxBody = 1024 * 1024;

}  // namespace

void HttpServer::request_stop() {
  g_stop_requested = 1;
  if (g_stop_pipe[1] >= 0) {
    const char c = 's';
    [[maybe_unused]] const ssize_t n = ::write(g_stop_pipe[1], &c, 1);
  }
}

HttpServer::HttpServer(Ledger& ledger, int port, bool split_writes)
    : ledger_(ledger), split_writes_(split_writes) {
  if (::pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                             std::strerror(errno));
  if (::listen(listen_fd_, 256) != 0)
    throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
}

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (int& fd : g_stop_pipe) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void HttpServer::run() {
  uint64_t next_connection = 1;
  while (!g_stop_requested) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {g_stop_pipe[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      std::cerr << "ledger: poll: " << std::strerror(errno) << "\n";
      break;
    }
    if (fds[1].revents != 0) break;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (!split_writes_) {
      // Responses go out in one write anyway; no Nagle delay for them.
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    std::vector<std::thread> done;
    {
      std::lock_guard lock(g_connections.mutex);
      for (uint64_t n : g_connections.finished) {
        done.push_back(std::move(g_connections.threads[n]));
        g_connections.threads.erase(n);
      }
      g_connections.finished.clear();
      g_connections.fds.insert(fd);
      const uint64_t number = next_connection++;
      g_connections.threads.emplace(
          number, std::thread([this, fd, number] { serve_connection(fd, number); }));
    }
    for (std::thread& t : done) t.join();
  }
  // Stop: no new connections; wake every connection's thread and join them.
  ::close(listen_fd_);
  listen_fd_ = -1;
  std::map<uint64_t, std::thread> threads;
  {
    std::lock_guard lock(g_connections.mutex);
    for (int fd : g_connections.fds) ::shutdown(fd, SHUT_RDWR);
    threads.swap(g_connections.threads);
    g_connections.finished.clear();
  }
  for (auto& [number, t] : threads) t.join();
}

namespace {

// Appends what the connection has (at least one byte); false at its end or
// on an error. Retries a receive a signal interrupted.
bool receive_more(int fd, std::string& buffer) {
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }
}

}  // namespace

void HttpServer::serve_connection(int fd, uint64_t number) {
  std::string buffer;
  uint64_t sequence = 0;
  bool keep_alive = true;
  while (keep_alive) {
    // Head.
    size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (buffer.size() > kMaxHeader) {
        keep_alive = false;
        break;
      }
      if (!receive_more(fd, buffer)) {
        keep_alive = false;
        break;
      }
    }
    if (!keep_alive) break;
    Request request;
    request.connection = number;
    request.sequence = sequence++;
    const std::string head = buffer.substr(0, head_end);
    buffer.erase(0, head_end + 4);
    const size_t line_end = head.find("\r\n");
    const std::string line = head.substr(0, line_end);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
    Response response;
    size_t content_length = 0;
    bool bad = sp1 == std::string::npos || sp2 == std::string::npos ||
               line.compare(sp2 + 1, 7, "HTTP/1.") != 0;
    if (!bad) {
      request.method = line.substr(0, sp1);
      const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
      const size_t q = target.find('?');
      request.path = url_decode(target.substr(0, q));
      if (q != std::string::npos) parse_pairs(target.substr(q + 1), request.query);
      if (line.compare(sp2 + 1, 8, "HTTP/1.0") == 0) keep_alive = false;
      size_t pos = line_end;
      while (pos != std::string::npos && pos < head.size()) {
        const size_t next = head.find("\r\n", pos + 2);
        const std::string header =
            head.substr(pos + 2, (next == std::string::npos ? head.size() : next) - pos - 2);
        pos = next;
        const size_t colon = header.find(':');
        if (colon == std::string::npos) continue;
        const std::string name = lower(header.substr(0, colon));
        std::string value = header.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (name == "content-length") {
          content_length = static_cast<size_t>(std::strtoull(value.c_str(), nullptr, 10));
        } else if (name == "connection") {
          if (lower(value) == "close") keep_alive = false;
          if (lower(value) == "keep-alive") keep_alive = true;
        } else if (name == "transfer-encoding") {
          bad = true;  // chunked request bodies are not supported
        }
      }
    }
    if (content_length > kMaxBody) {
      response = {413, R"({"error":"body too large"})"};
      keep_alive = false;
    } else {
      while (buffer.size() < content_length) {
        if (!receive_more(fd, buffer)) {
          keep_alive = false;
          break;
        }
      }
      if (buffer.size() < content_length) break;
      request.body = buffer.substr(0, content_length);
      buffer.erase(0, content_length);
      if (bad) {
        response = {400, R"({"error":"malformed request"})"};
        keep_alive = false;
      } else {
        // A form body's fields join the query's.
        if (!request.body.empty() && request.body.front() != '{')
          parse_pairs(request.body, request.query);
        response = ledger_.handle(request);
      }
    }
    response.body += "\n";
    std::string head_out = "HTTP/1.1 " + std::to_string(response.status) + " " +
                           reason_phrase(response.status) +
                           "\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(response.body.size()) +
                           (keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n");
    bool sent;
    if (split_writes_) {
      // The planted transport problem: headers and body in two writes on a
      // socket without TCP_NODELAY. Nagle's algorithm holds the body until
      // the client acknowledges the headers, which it delays (~40 ms).
      sent = send_all(fd, head_out.data(), head_out.size()) &&
             send_all(fd, response.body.data(), response.body.size());
    } else {
      head_out += response.body;
      sent = send_all(fd, head_out.data(), head_out.size());
    }
    if (!sent) break;
  }
  std::lock_guard lock(g_connections.mutex);
  g_connections.fds.erase(fd);
  g_connections.finished.push_back(number);
  ::close(fd);
}

}  // namespace ledger
