// The load driver's HTTP/1.1 client: one keep-alive connection per virtual
// user (cpp-httplib's client, with TCP_NODELAY so that a request leaves at
// once), reopened when the server closes it. cpp-httplib stays in
// http_client.cpp: its header is a large part of any file's compile time.
#pragma once

#include <memory>
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
  int request(const std::string& method, const std::string& target, const std::string& body,
              std::string& error);

 private:
  struct Client;  // cpp-httplib's client
  std::string host_;
  int port_;
  std::unique_ptr<Client> client_;
};

}  // namespace sonde::diagnose::load
