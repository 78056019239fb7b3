#include "serve/web_server.hpp"

#include <arpa/inet.h>
#include <httplib.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "serve/api.hpp"
#include "serve/context_api.hpp"
#include "serve/diagnosis_report.hpp"
#include "serve/live_api.hpp"
#include "serve/web_assets.hpp"

namespace sonde::serve {

bool is_loopback_host(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

bool parse_listen(const std::string& text, std::string* host, int* port, std::string* error) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    *error = "--listen needs HOST:PORT, got '" + text + "'";
    return false;
  }
  std::string h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) h = "127.0.0.1";
  const std::string p = text.substr(colon + 1);
  int n = -1;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || n < 0 || n > 65535) {
    *error = "--listen needs a port from 0 to 65535, got '" + p + "'";
    return false;
  }
  *host = h;
  *port = n;
  return true;
}

namespace {

constexpr const char* kSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// Constant-time comparison: a token check must not leak how much matched.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string cookie_token(const httplib::Request& req) {
  const std::string cookies = req.get_header_value("Cookie");
  const std::string key = "sonde_token=";
  size_t pos = 0;
  while ((pos = cookies.find(key, pos)) != std::string::npos) {
    if (pos == 0 || cookies[pos - 1] == ' ' || cookies[pos - 1] == ';') {
      const size_t start = pos + key.size();
      const size_t end = cookies.find(';', start);
      return cookies.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    pos += key.size();
  }
  return {};
}

// The host part of a Host header ("127.0.0.1:8080", "[::1]:80", "localhost").
std::string host_of(const std::string& header) {
  if (!header.empty() && header.front() == '[') {
    const size_t close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  return header.substr(0, header.find(':'));
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(nlohmann::json({{"error", message}})
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
}

}  // namespace

struct WebServer::Impl {
  store::TraceStore& store;
  ServeOptions options;
  httplib::Server http;
  std::unique_ptr<ContextModels> contexts;
  std::unique_ptr<LiveView> live;
  ApiExtras extras;

  Impl(store::TraceStore& s, ServeOptions o) : store(s), options(std::move(o)) {
    if (!options.context_log.empty()) {
      contexts = std::make_unique<ContextModels>(options.context_log);
      extras.contexts = contexts.get();
    }
    extras.diagnosis = options.diagnosis.get();
    extras.diagnosis_problem = options.diagnosis_problem;
    if (!options.collector_dir.empty()) {
      live = std::make_unique<LiveView>(options.collector_dir);
      extras.live = live.get();
    }
  }

  // Returns false (and fills res) when the request may not proceed.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    if (options.token.empty()) {
      if (!is_loopback_host(host_of(req.get_header_value("Host")))) {
        send_error(res, 403, "requests must name a loopback host (Host header)");
        return false;
      }
      return true;
    }
    std::string given;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.starts_with("Bearer ")) given = auth.substr(7);
    bool from_query = false;
    if (given.empty() && req.has_param("token")) {
      given = req.get_param_value("token");
      from_query = true;
    }
    if (given.empty()) given = cookie_token(req);
    if (!same_secret(given, options.token)) {
      send_error(res, 401, "this server needs its token (Authorization: Bearer TOKEN or ?token=)");
      return false;
    }
    if (from_query) {
      res.set_header("Set-Cookie",
                     "sonde_token=" + options.token + "; Path=/; HttpOnly; SameSite=Strict");
    }
    return true;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    res.set_header("Content-Security-Policy", kSecurityPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    if (!admit(req, res)) return;
    if (req.path.starts_with("/api/")) {
      QueryParams params(req.params.begin(), req.params.end());
      if (!options.token.empty()) params.erase("token");
      const ApiResponse r = handle_api(store, req.path, params, extras);
      res.status = r.status;
      res.set_content(r.body, r.content_type.c_str());
      return;
    }
    if (const auto asset = find_asset(req.path)) {
      res.status = 200;
      res.set_content(std::string(asset->data), std::string(asset->content_type).c_str());
      return;
    }
    send_error(res, 404, "not found");
  }
};

WebServer::WebServer(store::TraceStore& store, ServeOptions options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {
  const unsigned threads = std::max(1u, impl_->options.threads);
  impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    impl_->handle(req, res);
  };
  // One handler for every path and method: routing is ours (handle()).
  impl_->http.Get(".*", handler);
  impl_->http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD")
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, 405, "only GET is served");
    return httplib::Server::HandlerResponse::Handled;
  });
  impl_->http.set_payload_max_length(64 * 1024);
}

WebServer::~WebServer() { stop(); }

bool WebServer::bind(std::string* error) {
  const ServeOptions& o = impl_->options;
  if (!is_loopback_host(o.host) && o.token.empty()) {
    *error = "refusing to listen on '" + o.host +
             "': not a loopback address; give --token to allow other machines";
    return false;
  }
  if (o.port == 0) {
    port_ = impl_->http.bind_to_any_port(o.host);
    if (port_ < 0) {
      *error = "cannot listen on " + o.host + ": no free port or bad address";
      return false;
    }
    return true;
  }
  if (!impl_->http.bind_to_port(o.host, o.port)) {
    *error = "cannot listen on " + o.host + ":" + std::to_string(o.port) +
             " (address in use or not on this machine)";
    return false;
  }
  port_ = o.port;
  return true;
}

void WebServer::run() { impl_->http.listen_after_bind(); }

bool WebServer::running() const { return impl_->http.is_running(); }

void WebServer::stop() {
  if (impl_) impl_->http.stop();
}

}  // namespace sonde::serve
