// A minimal blocking HTTP/1.1 client for the load driver: one keep-alive
// connection per virtual user, reopened when the server closes it. Plain
// sockets so the driver measures the network round trip and nothing else.
#pragma once

#include <string>

namespace sonde::diagnose::load {

class HttpConnection {
 public:
  HttpConnection(std::string host, int port, int timeout_ms);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends one request and reads the whole response. Returns the HTTP status,
  // or 0 on a connection error (then `error` says what happened).
  int request(const std::string& method, const std::string& target, const std::string& body, std::string& error);

 private:
  bool connect_socket(std::string& error);
  void close_socket();
  bool send_all(const std::string& data);
  int read_response(std::string& error);

  std::string host_;
  int port_;
  int timeout_ms_;
  int fd_ = -1;
  std::string buffer_;  // bytes received beyond the last response
};

}  // namespace sonde::diagnose::load
