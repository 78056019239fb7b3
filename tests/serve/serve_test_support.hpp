// A `sonde serve` server on a free loopback port, running in a thread for
// the duration of a test.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "serve/web_server.hpp"

namespace sonde::serve::test {

inline std::string bookstore_log() {
  return std::string(SONDE_TESTDATA_DIR) + "/kieker/bookstore-oer-2010/log";
}

class RunningServer {
 public:
  RunningServer(store::TraceStore& store, ServeOptions options) : server_(store, options) {
    std::string error;
    bound_ = server_.bind(&error);
    EXPECT_TRUE(bound_) << error;
    if (!bound_) return;
    thread_ = std::thread([this] { server_.run(); });
    // Wait for the accept loop; the socket is bound already, so this is brief.
    for (int i = 0; i < 5000 && !server_.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~RunningServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return server_.port(); }

 private:
  WebServer server_;
  bool bound_ = false;
  std::thread thread_;
};

}  // namespace sonde::serve::test
