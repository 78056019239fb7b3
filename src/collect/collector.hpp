// `sonde collect`: receives records from many monitored processes over
// sonde's native stream or Kieker's TCP protocol and stores them in the embedded default store:
//   DIR/log/client-N.sonde   every record of connection N, native format:
//                            a native stream's chunks as the sender
//                            encoded them, Kieker's records encoded
//   DIR/index.sqlite         traces, their executions, per-operation
//                            aggregates and call edges (docs/formats/store.md)
//   DIR/collect-stats.json   per-client counts, rewritten as they change
//
// Two kinds of threads. The listener's one thread receives: it reads every
// connection, checks and decodes what arrives, writes it to the client's
// log and confirms it to a native sender once it is in the log. The
// analysis workers (`workers`, analysis_pool.hpp) reconstruct each
// client's traces from its log as it grows (log_follower.hpp) and index
// them, each client on one worker, with its own reconstructor (trace ids
// of different processes may clash), bounded open traces and a timeout.
// The log is the queue between the two: a burst costs disk for a while,
// not the sender's time; past `max_backlog_bytes` of log not yet analysed
// the listener stops reading until the workers catch up, and TCP flow
// control pushes back on the monitored processes instead of memory or
// disk growing without bound. A collector that keeps no logs (ClickHouse
// alone) reconstructs on the listener's thread as it receives.
//
// Nothing is dropped silently: records a log cannot carry are counted as
// rejected, bytes after a protocol error as undecoded, and the client's
// error is kept in the stats. A native chunk is written whole, after every
// check of it passed, so a log never holds part of an unconfirmed one (nor
// a chunk that failed a check). Without a log directory (ClickHouse alone)
// confirmation waits for the index commit; traces still open then are not in it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "collect/analysis_pool.hpp"
#include "collect/client_analysis.hpp"
#include "collect/locked_trace_index.hpp"
#include "collect/otlp_forwarder.hpp"
#include "collect/record_listener.hpp"
#include "format/native_format.hpp"
#include "store/index_sink.hpp"

namespace sonde::collect {

struct CollectorOptions {
  // The store: a directory (logs, index.sqlite and stats go there) or
  // clickhouse://HOST:PORT/DATABASE (then logs and stats go to log_dir,
  // if set).
  std::string out;
  std::string log_dir;  // ignored for a directory store (it is `out`)
  ListenerOptions listen;
  // Per connection. Open traces are bounded (the oldest is closed as
  // invalid past the bound) and closed after the timeout in log time.
  size_t max_open_traces = 10'000;
  int64_t trace_timeout_ns = int64_t{30} * 1'000'000'000;
  // How often new traces become visible to readers of the index.
  std::chrono::milliseconds commit_interval{500};
  // Trace reduction (MooBench's D; analysis/trace_reducer.hpp): store one
  // reduced trace per shape and window instead of every trace. Windows
  // also close at every commit, so reduced traces become visible as fast.
  bool reduce = false;
  analysis::ReductionOptions reduction;
  // Request-level spans of every valid trace to an OTLP/HTTP receiver
  // (otlp_forwarder.hpp), besides the store.
  std::optional<OtlpForwardOptions> forward;
  // With a ClickHouse store written by several collectors: this one's id
  // (0-65535; store/clickhouse_writer.hpp), which gives it its own range
  // of row and client ids. 0 for a single collector.
  uint32_t collector_id = 0;
  // Analysis workers (threads reconstructing and indexing; with logs only).
  size_t workers = 1;
  // Log bytes stored and not yet analysed, over all clients, past which
  // the listener stops reading until the workers catch up.
  uint64_t max_backlog_bytes = uint64_t{64} << 20;
  // How Kieker's records are compressed in the client logs (a native
  // stream's chunks are stored as the sender compressed them). LZ4 by
  // default: zstd's compressing and reading back was a quarter of the
  // collector's instructions on Kieker's protocol, for logs half the size
  // (docs/PERFORMANCE.md, "Kieker's protocol: LZ4 logs").
  format::native::Codec kieker_log_codec = format::native::Codec::kLz4;
};

struct ClientReport {
  store::ClientRecord record;  // id, peer, log file, received/stored/rejected, error
  uint64_t traces = 0;
  uint64_t invalid_traces = 0;
  uint64_t reduced_traces = 0;  // with reduction: reduced traces stored
  bool open = false;
  std::string protocol;           // "native" or "kieker" ("" before the first byte)
  uint64_t duplicate_chunks = 0;  // native: resent chunks already stored, skipped
};

// Every client since the collector started, open or closed.
struct ClientTotals {
  uint64_t clients = 0;
  uint64_t received = 0, stored = 0, rejected = 0;
  uint64_t traces = 0, invalid_traces = 0, reduced_traces = 0;
  void add(const ClientReport& c);
};

class Collector final : private ConnectionHandler {
 public:
  explicit Collector(CollectorOptions options);
  ~Collector() override;
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Creates DIR, DIR/log and the index (or connects to ClickHouse), then binds. Returns "" or an
  // error naming the path or address and the reason.
  std::string open();
  uint16_t port() const { return listener_.port(); }
  // Serves until `stop`, the connection budget, or a storage error.
  void run(const std::atomic<bool>& stop);
  // Closes every client, commits the index and writes the stats file.
  // Returns "" or the first storage error.
  std::string finish();

  // The open clients and the last `listen.listed_closed_clients` closed
  // ones, by id; every client's record is in the store regardless.
  std::vector<ClientReport> clients() const;
  ClientTotals totals() const;
  // The OTLP forwarding's counts (all zero without --forward).
  OtlpForwardStats forward_stats() const;
  // Waiting for a free slot now (over --max-clients), and those still
  // waiting when the collector stopped (never read; their bytes counted).
  size_t queued_connections() const { return listener_.queued_connections(); }
  uint64_t unserved_connections() const { return listener_.unserved_connections(); }
  uint64_t unserved_bytes() const { return listener_.unserved_bytes(); }
  size_t peak_open_clients() const { return listener_.peak_connections(); }
  // Log bytes stored and not yet analysed (all clients), and its peak.
  uint64_t backlog_bytes() const { return backlog_total_.load(std::memory_order_relaxed); }
  uint64_t peak_backlog_bytes() const { return peak_backlog_; }
  const std::string& stats_path() const { return stats_path_; }

 private:
  class Client;
  format::RecordSink& on_open(size_t client, const ClientStats& stats) override;
  NativeChunkSink* chunk_sink(size_t client) override;
  void on_close(size_t client, const ClientStats& stats) override;
  bool on_tick() override;
  bool on_delivered(size_t client) override;
  bool can_confirm() const override { return error_.empty() && !index_->failed(); }
  void commit();
  void write_stats();
  void fail(const std::string& error);
  // A closed client whose analysis has finished leaves only its report.
  void retire(std::unique_ptr<Client> client);
  void retire_analysed();
  // The listener waits while the workers are too far behind.
  void hold_back();

  CollectorOptions options_;
  RecordListener listener_;
  std::unique_ptr<LockedTraceIndex> index_;
  std::unique_ptr<OtlpForwarder> forwarder_;      // with options.forward
  std::string log_dir_;                           // "" = keep no logs
  std::vector<std::unique_ptr<Client>> clients_;  // by listener client index; null once closed
  std::vector<std::unique_ptr<Client>> closing_;  // closed, their analysis still running
  std::atomic<uint64_t> backlog_total_{0};        // log bytes not yet analysed
  std::atomic<uint64_t> analysis_errors_{0};      // followers whose reading failed
  uint64_t errors_noted_ = 0;
  uint64_t progress_committed_ = 0;  // the pool's progress() at the last commit
  uint64_t peak_backlog_ = 0;
  std::deque<ClientReport> closed_;  // the last listen.listed_closed_clients closed
  ClientTotals closed_totals_;       // every closed client
  std::string stats_path_;
  std::string error_;
  std::chrono::steady_clock::time_point last_commit_;
  bool dirty_ = false;
  size_t queued_written_ = 0;  // queued connections the stats file shows
  bool finished_ = false;
  // Last: its workers stop before the clients and the index go.
  std::unique_ptr<AnalysisPool> pool_;  // with logs
};

}  // namespace sonde::collect
