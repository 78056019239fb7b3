#include "collect/otlp_forwarder.hpp"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>

#include "analysis/export/export_support.hpp"

namespace sonde::collect {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

bool retryable_status(int status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Retry-After in seconds (the HTTP-date form is not honoured: then the
// backoff applies).
milliseconds retry_after(const httplib::Response& res, milliseconds fallback, milliseconds cap) {
  if (!res.has_header("Retry-After")) return fallback;
  const std::string text = res.get_header_value("Retry-After");
  long seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || seconds < 0) return fallback;
  return std::min(cap, milliseconds(seconds * 1000));
}

}  // namespace

std::string parse_otlp_target(std::string_view url, OtlpForwardOptions& out) {
  constexpr std::string_view kScheme = "otlp://";
  const std::string quoted = "'" + std::string(url) + "'";
  if (url.substr(0, kScheme.size()) != kScheme)
    return "not an OTLP target " + quoted + " (expected otlp://HOST:PORT)";
  std::string_view rest = url.substr(kScheme.size());
  std::string path = "/v1/traces";
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    path = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  int port = 4318;
  std::string_view host = rest;
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    const std::string_view digits = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535)
      return "bad port in OTLP target " + quoted;
  }
  if (host.empty()) return "no host in OTLP target " + quoted;
  out.host = std::string(host);
  out.port = port;
  out.path = path;
  return "";
}

OtlpForwarder::OtlpForwarder(OtlpForwardOptions options)
    : options_(std::move(options)), thread_([this] { run(); }) {}

OtlpForwarder::~OtlpForwarder() { shutdown(options_.timeout); }

void OtlpForwarder::on_trace(const analysis::Trace& trace) {
  add(analysis::one_part_stitched_trace(trace));
}

void OtlpForwarder::add(const analysis::StitchedTrace& trace) {
  enqueue(analysis::otlp_spans(trace, options_.spans));
}

void OtlpForwarder::enqueue(std::vector<analysis::OtlpSpan> spans) {
  if (spans.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (analysis::OtlpSpan& span : spans) {
    if (stopping_ || queue_.size() >= options_.max_queue_spans) {
      ++stats_.spans_dropped;
      continue;
    }
    queue_.push_back(std::move(span));
    ++stats_.spans_queued;
  }
  if (queue_.size() >= options_.max_batch_spans) wake_.notify_one();
}

void OtlpForwarder::run() {
  std::unique_lock<std::mutex> lock(mu_);
  auto last_send = Clock::now();
  for (;;) {
    wake_.wait_until(lock, last_send + options_.schedule_delay,
                     [&] { return stopping_ || queue_.size() >= options_.max_batch_spans; });
    if (queue_.empty()) {
      if (stopping_) return;
      last_send = Clock::now();
      continue;
    }
    if (stopping_ && Clock::now() >= deadline_) {
      // Shutdown's time is up: what was never sent is given up.
      stats_.spans_failed += queue_.size();
      std::string why = std::to_string(queue_.size()) +
                        " spans were still queued for the OTLP receiver " + options_.host + ":" +
                        std::to_string(options_.port) + " when the collector stopped";
      if (!stats_.last_error.empty()) why += " (before that: " + stats_.last_error + ")";
      stats_.last_error = std::move(why);
      queue_.clear();
      return;
    }
    if (!stopping_ && queue_.size() < options_.max_batch_spans &&
        Clock::now() < last_send + options_.schedule_delay) {
      continue;  // woken early
    }
    const size_t n = std::min(queue_.size(), options_.max_batch_spans);
    std::vector<analysis::OtlpSpan> batch(std::make_move_iterator(queue_.begin()),
                                          std::make_move_iterator(queue_.begin() + n));
    queue_.erase(queue_.begin(), queue_.begin() + n);
    lock.unlock();
    send(batch);
    lock.lock();
    last_send = Clock::now();
  }
}

bool OtlpForwarder::pause(milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto until = Clock::now() + d;
  for (;;) {
    const auto now = Clock::now();
    if (stopping_ && now >= deadline_) return false;
    if (now >= until) return true;
    wake_.wait_until(lock, stopping_ ? std::min(until, deadline_) : until);
  }
}

void OtlpForwarder::send(const std::vector<analysis::OtlpSpan>& batch) {
  const std::string body = analysis::encode_otlp_request(batch, options_.resource);
  const std::string receiver = options_.host + ":" + std::to_string(options_.port) + options_.path;
  const auto n = static_cast<uint64_t>(batch.size());
  auto finish = [&](uint64_t exported, uint64_t rejected, uint64_t failed, std::string error) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.spans_exported += exported;
    stats_.spans_rejected += rejected;
    stats_.spans_failed += failed;
    if (!error.empty()) stats_.last_error = std::move(error);
  };
  // One client for every batch and attempt: it keeps its connection alive
  // between requests (only the sender thread uses it).
  if (!client_) {
    auto& client = client_;
    client = std::make_unique<httplib::Client>(options_.host, options_.port);
    const auto seconds = options_.timeout.count() / 1000;
    const auto micros = (options_.timeout.count() % 1000) * 1000;
    client->set_connection_timeout(seconds, micros);
    client->set_read_timeout(seconds, micros);
    client->set_write_timeout(seconds, micros);
    client->set_keep_alive(true);
  }
  milliseconds backoff = options_.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.requests;
      if (attempt > 1) ++stats_.retries;
    }
    const httplib::Result res = client_->Post(options_.path, body, "application/x-protobuf");
    milliseconds wait = backoff;
    std::string error;
    if (!res) {
      error = "cannot reach the OTLP receiver " + receiver + ": " + httplib::to_string(res.error());
    } else if (res->status >= 200 && res->status < 300) {
      const auto partial = analysis::decode_otlp_response(res->body);
      const uint64_t rejected =
          partial ? std::min<uint64_t>(
                        n, static_cast<uint64_t>(std::max<int64_t>(partial->rejected_spans, 0)))
                  : 0;
      finish(n - rejected, rejected, 0,
             rejected == 0 ? std::string()
                           : "the OTLP receiver " + receiver + " rejected " +
                                 std::to_string(rejected) + " spans: " + partial->error_message);
      return;
    } else if (retryable_status(res->status)) {
      error = "the OTLP receiver " + receiver + " answered " + std::to_string(res->status);
      wait = retry_after(*res, backoff, options_.max_retry_after);
    } else {
      // 400 and every other status: the request will never be accepted.
      finish(0, n, 0,
             "the OTLP receiver " + receiver + " refused a batch of " + std::to_string(n) +
                 " spans with status " + std::to_string(res->status) +
                 (res->body.empty() ? "" : ": " + res->body.substr(0, 200)));
      return;
    }
    if (attempt >= options_.max_attempts || !pause(wait)) {
      finish(0, 0, n, error + " (gave up after " + std::to_string(attempt) + " attempts)");
      return;
    }
    backoff = std::min(options_.max_backoff,
                       milliseconds(static_cast<int64_t>(static_cast<double>(backoff.count()) *
                                                         options_.backoff_multiplier)));
  }
}

void OtlpForwarder::shutdown(milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      deadline_ = Clock::now() + timeout;
    }
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

OtlpForwardStats OtlpForwarder::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace sonde::collect
