// The HTTP side of `sonde serve`: the embedded UI and the JSON API (api.hpp)
// from one process, on cpp-httplib.
//
// Safety rules, enforced here rather than left to the caller:
//   - binds 127.0.0.1 unless told otherwise, and refuses any address that
//     is not loopback unless a token is set; with a token every request must
//     carry it (Authorization: Bearer T, ?token=T, or the cookie the server
//     sets after a ?token=T page load, so the page's own requests carry it);
//   - without a token, requests whose Host header is not a loopback name are
//     refused (a web page cannot reach the server through DNS rebinding);
//   - assets come from memory by exact name (web_assets.hpp): no path can
//     reach the file system;
//   - every response forbids scripts from anywhere but the server itself
//     (Content-Security-Policy) and content sniffing.
#pragma once

#include <memory>
#include <string>

#include "store/trace_store.hpp"

namespace sonde::serve {

struct DiagnosisReport;

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (see WebServer::port())
  std::string token;
  // Threads that serve connections, one connection each at a time. A
  // browser opens up to six connections per server and keeps each one open
  // for a while after its last request (keep-alive), so fewer threads than
  // that leave a page's later requests queued until an idle connection
  // times out: with 4, every page load of the web UI took 5 s (cpp-httplib's
  // keep-alive timeout). 32 serve five browsers at once; an idle thread
  // costs only its stack.
  unsigned threads = 32;
  // The log behind the store, for the calling-context views (empty: off).
  std::string context_log;
  // The diagnosis report (load_diagnosis_report); null: /api/diagnosis
  // answers 404 with `diagnosis_problem` or a hint.
  std::shared_ptr<const DiagnosisReport> diagnosis;
  std::string diagnosis_problem;
  // The directory a collector writes (is_collector_dir), for /api/live; "" = none.
  std::string collector_dir;
};

// Whether `host` is a loopback address or name (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(const std::string& host);

// Splits "HOST:PORT" (or "[V6]:PORT", or ":PORT" for 127.0.0.1); false with
// `error` set on anything else.
bool parse_listen(const std::string& text, std::string* host, int* port, std::string* error);

class WebServer {
 public:
  explicit WebServer(store::TraceStore& store, ServeOptions options);
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Checks the bind policy and binds; false with `error` set if refused or
  // the port cannot be bound.
  bool bind(std::string* error);
  int port() const { return port_; }
  // Serves until stop() (blocking); call after bind().
  void run();
  // Whether run() is accepting connections (tests wait for this).
  bool running() const;
  // From any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace sonde::serve
