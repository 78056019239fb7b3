// Live OTLP/HTTP export of request-level spans (`sonde collect --forward
// otlp://HOST:PORT`): each trace the collector reconstructs becomes spans
// (by default only each part's root executions, plus any execution longer
// than a threshold: a span per function call would flood any backend),
// queued, and posted in batches to an OpenTelemetry collector or backend as
// `POST /v1/traces` with an ExportTraceServiceRequest in protobuf.
//
// Batching as the OpenTelemetry SDK's BatchSpanProcessor defaults: a queue
// of 2048 spans (a span arriving at a full queue is dropped and counted),
// batches of at most 512, sent when 512 are queued or 5 s after the last
// send. Retries as the OTLP/HTTP specification says: only on 429, 502, 503
// and 504 (and when the connection fails), with exponential backoff (1 s,
// ×1.5, at most 5 s; a Retry-After header is honoured up to 30 s), at most
// 5 attempts; never on 400 or any other status. Every span ends up counted
// as exported, rejected (by the receiver: a status it will not accept, or
// its partial_success), failed (given up after retries, or the receiver
// unreachable at shutdown) or dropped (queue full), so nothing is lost
// silently. The network runs on the forwarder's own thread: a slow receiver
// never slows the collector.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/export/otlp_proto.hpp"
#include "analysis/export/otlp_spans.hpp"
#include "analysis/model/trace_model.hpp"

namespace httplib {
class Client;
}

namespace sonde::collect {

struct OtlpForwardOptions {
  std::string host;
  int port = 4318;
  std::string path = "/v1/traces";
  size_t max_queue_spans = 2048;
  size_t max_batch_spans = 512;
  std::chrono::milliseconds schedule_delay{5000};
  std::chrono::milliseconds timeout{10000};  // per request: connect, send, receive
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{5000};
  double backoff_multiplier = 1.5;
  std::chrono::milliseconds max_retry_after{30000};
  analysis::OtlpSpanOptions spans{true, true, 0};  // short labels, roots only
  analysis::OtlpResourceOptions resource;
};

// "otlp://HOST:PORT" or "otlp://HOST:PORT/PATH" (default port 4318, path
// /v1/traces) into `out`; "" or the error, naming the text.
std::string parse_otlp_target(std::string_view url, OtlpForwardOptions& out);

struct OtlpForwardStats {
  uint64_t spans_queued = 0;
  uint64_t spans_exported = 0;  // accepted by the receiver
  uint64_t spans_rejected = 0;  // refused by the receiver (status or partial_success)
  uint64_t spans_failed = 0;    // given up: retries exhausted, or unsent at shutdown
  uint64_t spans_dropped = 0;   // the queue was full
  uint64_t requests = 0;        // POSTs sent, retries included
  uint64_t retries = 0;
  std::string last_error;  // names the receiver and what went wrong
  // Spans neither exported, rejected, failed nor dropped: still queued or in flight.
  uint64_t pending() const { return spans_queued - spans_exported - spans_rejected - spans_failed; }
};

class OtlpForwarder final : public analysis::TraceSink {
 public:
  explicit OtlpForwarder(OtlpForwardOptions options);
  ~OtlpForwarder() override;  // shutdown(options.timeout)
  OtlpForwarder(const OtlpForwarder&) = delete;
  OtlpForwarder& operator=(const OtlpForwarder&) = delete;

  // A reconstructed trace (one process's part): its spans are queued.
  void on_trace(const analysis::Trace& trace) override;
  void on_invalid_trace(const analysis::InvalidTrace&) override {}
  // A stitched trace (several threads or processes).
  void add(const analysis::StitchedTrace& trace);

  // Sends what is queued, retrying within `timeout`; what is still unsent
  // then counts as failed. Idempotent.
  void shutdown(std::chrono::milliseconds timeout);

  OtlpForwardStats stats() const;

 private:
  void enqueue(std::vector<analysis::OtlpSpan> spans);
  void run();
  // One batch, with retries. Called without mu_ held.
  void send(const std::vector<analysis::OtlpSpan>& batch);
  // Sleeps `d`, or less if shutdown's deadline comes first; false if the
  // deadline has passed.
  bool pause(std::chrono::milliseconds d);

  OtlpForwardOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<analysis::OtlpSpan> queue_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point deadline_;  // set by shutdown
  OtlpForwardStats stats_;
  std::unique_ptr<httplib::Client> client_;  // the sender thread's
  std::thread thread_;
};

}  // namespace sonde::collect
