// The collector's connection handling and bookkeeping (collector.hpp):
// Collector::Client, one per connection (its log, counts, and the
// handover to its analysis worker), and Collector's callbacks from the
// listener, commits, stats file and finish. About 600 lines in one file
// because Client reaches into Collector's private state (clients, totals,
// the index, the backlog bound) at every step; what stands alone lives
// beside it: receiving (record_listener), decoding (connection_decoder),
// the workers (analysis_pool, log_follower, client_analysis), the raw
// native log and the chunks already stored (raw_native_log, stored_chunks).
#include "collect/collector.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "collect/raw_native_log.hpp"
#include "format/native_writer.hpp"
#include "format/record_log_writer.hpp"
#include "format/typed_flow_sink.hpp"

namespace sonde::collect {

namespace fs = std::filesystem;

// Up to --max-clients logs are open at once, each holding up to this much:
// a native client's write buffer of received chunks, or a Kieker client's
// chunk being encoded (plus its compressed copy), 128 KiB instead of the
// default 1 MiB (RSS measured in docs/RELIABILITY.md's soak).
constexpr size_t kLogChunkBytes = 128u << 10;

// Closed clients whose logs the workers have not finished, past which
// receiving waits (a stream of tiny connections stays under any byte
// bound); each waiting one holds its counts, its log's name and its empty
// sinks (not measured).
constexpr size_t kMaxClientsBeingAnalysed = 20'000;

// One monitored process as the listener thread sees it: its log file and
// its counts; its reconstruction (ClientAnalysis) runs on an analysis
// worker that follows the log, or inline when no log is kept.
class Collector::Client final : public format::RecordSink,
                                public NativeChunkSink,
                                private format::TypedFlowSink {
 public:
  Client(Collector& owner, int64_t id, const std::string& peer)
      : owner_(owner),
        analysis_(*owner.index_, id, settings(owner.options_), owner.forwarder_.get(),
                  /*batched=*/!owner.log_dir_.empty()) {
    report_.record.id = id;
    report_.record.peer = peer;
    report_.open = true;
    if (!owner.log_dir_.empty()) {
      report_.record.log_file = "log/client-" + std::to_string(id) + ".sonde";
      log_path_ = (fs::path(owner.log_dir_) / report_.record.log_file).string();
      follower_ = std::make_unique<LogFollower>(log_path_, peer, analysis_, owner.backlog_total_,
                                                &owner.analysis_errors_);
      owner.pool_->add(*follower_, static_cast<uint64_t>(id));
    }
  }

  bool keeps_log() const { return !log_path_.empty(); }

  bool on_record(const format::Record& r) override {
    if (!keeps_log()) {
      // Stored once the reconstruction has it (no log).
      count_received();
      analysis_.input().on_record(r);
      return taken();
    }
    if (raw_) {
      // A native stream's record: stored with its chunk
      // (on_native_chunk), analysed from the log. Not reached while the
      // decoder only counts them (counts_records_only()); kept so that one
      // can never be encoded into the log a second time.
      count_received();
      return taken();
    }
    // Kieker's protocol is not the log format: each record is encoded.
    store::ClientRecord& c = report_.record;
    ++c.received;
    if (!log_) open_record_log();
    const uint64_t rejected_before = log_->rejected();
    if (!log_->on_record(r)) {
      // The output failed (disk full, ...): stop rather than lose records
      // silently. finish() names the file and the reason.
      log_error_ = log_->finish();
      if (log_error_.empty()) log_error_ = "cannot write " + c.log_file;
      owner_.fail(log_error_);
      return false;
    }
    if (log_->rejected() != rejected_before) {
      ++c.rejected;
    } else {
      ++c.stored;
    }
    owner_.dirty_ = true;
    return !owner_.index_->failed();
  }

  // A native stream's flow records come in typed form: straight to the
  // reconstructor's fast path without a log, only counted with one (the
  // worker reads them back from the log).
  format::TypedFlowSink* typed_flow() override {
    typed_ = keeps_log() ? nullptr : analysis_.input().typed_flow();
    return this;
  }

  bool on_stream_header(std::string_view header) override {
    if (!keeps_log()) return true;
    raw_ = std::make_unique<RawNativeLog>(log_path_);
    return raw_->header(header) || raw_failed();
  }

  // With a log, a native stream's records are analysed from it: here they
  // are only counted, a chunk at a time.
  bool counts_records_only() const override { return keeps_log(); }
  bool on_records_received(uint64_t records) override {
    report_.record.received += records;
    owner_.dirty_ = true;
    return taken();
  }

  bool on_native_chunk(std::string_view chunk, uint64_t records, bool duplicate,
                       std::string_view definitions, uint32_t definition_items) override {
    if (!raw_) return true;  // no log kept: on_record counted them
    bool ok = true;
    if (!duplicate) {
      ok = raw_->append(chunk);
    } else if (definition_items > 0) {
      // The events are in an earlier connection's log already; later
      // chunks of this one may refer to the definitions.
      ok = raw_->append(format::NativeWriter::frame_chunk(definitions, definition_items));
    }
    if (!ok) return raw_failed();
    report_.record.stored += records;
    return true;
  }

  // The connection is gone: close its log; without one, its open traces
  // too (with one, the worker closes them once it has read the log to
  // its end: analysed()).
  void close(const ClientStats& stats) {
    if (!report_.open) return;
    report_.open = false;
    report_.record.undecoded_bytes = stats.undecoded_bytes;
    report_.record.error = stats.error;
    analysis_error_noted_ = false;  // the connection's error came first; the analysis' follows
    // A connection that sent nothing still leaves the (empty) log the
    // stats name.
    if (keeps_log() && !raw_ && !log_) open_record_log();
    std::string e = log_error_;
    if (e.empty() && raw_) e = raw_->finish();
    if (e.empty() && log_) e = log_->finish();
    if (!e.empty()) {
      owner_.fail(e);
      if (report_.record.error.empty()) report_.record.error = e;
    }
    if (follower_) {
      publish_log();
      follower_->end_of_input();
      owner_.pool_->wake(static_cast<uint64_t>(report_.record.id));
    } else {
      analysis_.finish();
    }
    log_.reset();
    raw_.reset();
  }

  // Closed, and its traces all reconstructed and stored.
  bool analysed() {
    if (report_.open) return false;
    if (!follower_) return true;
    if (!follower_->done()) return false;
    note_analysis_error();
    follower_.reset();
    return true;
  }

  // A worker's error reading the log back becomes the client's (if it had
  // none), as soon as the listener sees it: its traces after that point are not in
  // the index, though its log holds every record. It does not stop the
  // collector: the other clients' logs and traces are unaffected.
  void note_analysis_error() {
    if (!follower_ || !follower_->failed() || analysis_error_noted_) return;
    analysis_error_noted_ = true;
    std::string& e = report_.record.error;
    e += (e.empty() ? "" : "; ") + follower_->error();
    owner_.dirty_ = true;
  }

  ClientReport report() const {
    if (!follower_ && report_.open) analysis_.publish();  // inline: this thread's counts
    ClientReport r = report_;
    const ClientAnalysis::Counts n = analysis_.counts();
    r.traces = n.traces;
    r.invalid_traces = n.invalid_traces;
    r.reduced_traces = n.reduced_traces;
    return r;
  }

  bool is_open() const { return report_.open; }
  bool analysis_done() const { return !report_.open && (!follower_ || follower_->done()); }

  // The connection's, kept past its close for the report.
  std::string protocol;
  uint64_t duplicate_chunks = 0;
  // After records were delivered (every native chunk decoded so far): true
  // when they are all in the log file, which is written in chunks of
  // kLogChunkBytes.
  bool delivered() {
    if (!keeps_log()) return false;  // confirmed after the index commit
    if (buffered_bytes() >= kLogChunkBytes) flush_log();
    return log_error_.empty() && buffered_bytes() == 0;
  }

  // Writes the log's buffered bytes to the file (before a commit that
  // confirms them to the sender) and hands them to the analysis.
  void flush_log() {
    if (!log_error_.empty()) return;
    if (raw_ && !raw_->flush()) {
      raw_failed();
      return;
    }
    if (log_ && !log_->flush()) {
      log_error_ = log_->finish();
      if (log_error_.empty()) log_error_ = "cannot write " + report_.record.log_file;
      owner_.fail(log_error_);
      return;
    }
    publish_log();
  }
  // Hands the traces held back to the index, and the reduced traces of the
  // open window (before a commit); with a log the worker does so itself.
  void flush_analysis() {
    if (!follower_ && report_.open) analysis_.flush();
  }

 private:
  static AnalysisSettings settings(const CollectorOptions& o) {
    AnalysisSettings a;
    a.reconstruction.max_open_traces = o.max_open_traces;
    a.reconstruction.trace_timeout_ns = o.trace_timeout_ns;
    a.reduce = o.reduce;
    a.reduction = o.reduction;
    return a;
  }

  // The worker may read the log up to what is in the file now.
  void publish_log() {
    if (!follower_) return;
    uint64_t bytes = 0;
    if (raw_) {
      bytes = raw_->bytes_written();
    } else {
      std::error_code ec;
      const auto size = fs::file_size(log_path_, ec);
      if (ec) return;  // not created yet
      bytes = size;
    }
    follower_->publish(bytes);
    owner_.pool_->wake(static_cast<uint64_t>(report_.record.id));
  }

  // format::TypedFlowSink, for typed_flow(): counts, and without a log
  // feeds the reconstruction.
  void on_source_begin() override {
    if (typed_ != nullptr) typed_->on_source_begin();
  }
  void on_operation(uint32_t id, std::string_view signature, std::string_view component) override {
    if (typed_ != nullptr) typed_->on_operation(id, signature, component);
  }
  bool on_trace_start(const format::TypedTraceStart& start) override {
    count_received();
    if (typed_ != nullptr) typed_->on_trace_start(start);
    return taken();
  }
  bool on_operation_event(const format::TypedOperationEvent& event) override {
    count_received();
    if (typed_ != nullptr) typed_->on_operation_event(event);
    return taken();
  }
  // A record for the reconstruction alone: without a log it is stored
  // once the reconstruction has it; a native log counts it with its chunk.
  void count_received() {
    ++report_.record.received;
    if (!keeps_log()) ++report_.record.stored;
    owner_.dirty_ = true;
  }
  // False stops the connection: its log or the index failed.
  bool taken() const { return log_error_.empty() && !owner_.index_->failed(); }

  size_t buffered_bytes() const {
    return raw_ ? raw_->buffered_bytes() : log_ ? log_->buffered_bytes() : 0;
  }

  void open_record_log() {
    format::NativeWriterOptions chunks;
    chunks.chunk_target = kLogChunkBytes;
    chunks.manual_flush = true;  // flush_log() cuts chunks where the sender's frames end
    chunks.codec = owner_.options_.kieker_log_codec;
    log_ = format::open_record_log(format::OutputFormat::kNative, log_path_,
                                   format::Compression::kNone, chunks);
  }

  // Writing the raw log failed: stop the connection, name the file.
  bool raw_failed() {
    if (log_error_.empty()) log_error_ = raw_->error();
    owner_.fail(log_error_);
    return false;
  }

  Collector& owner_;
  ClientAnalysis analysis_;
  std::unique_ptr<LogFollower> follower_;         // with a log: the worker's reader of it
  format::TypedFlowSink* typed_ = nullptr;        // without a log: the reconstructor's fast path
  std::string log_path_;                          // "" = keep no log
  std::unique_ptr<format::RecordLogWriter> log_;  // Kieker's protocol: records encoded
  std::unique_ptr<RawNativeLog> raw_;             // native: the sender's chunks as received
  std::string log_error_;                         // why writing the log failed
  bool analysis_error_noted_ = false;
  ClientReport report_;
};

namespace {

ListenerOptions confirm_after_storing(ListenerOptions o) {
  o.confirm_when_decoded = false;  // commit() confirms
  return o;
}

}  // namespace

Collector::Collector(CollectorOptions options)
    : options_(std::move(options)),
      listener_(static_cast<ConnectionHandler&>(*this), confirm_after_storing(options_.listen)) {}

Collector::~Collector() { finish(); }

std::string Collector::open() {
  log_dir_ = store::is_clickhouse_url(options_.out) ? options_.log_dir : options_.out;
  if (!log_dir_.empty()) {
    std::error_code ec;
    const fs::path dir(log_dir_);
    fs::create_directories(dir / "log", ec);
    if (ec) return "cannot create " + (dir / "log").string() + ": " + ec.message();
    // Probe that files can be created here before accepting anyone's records.
    stats_path_ = (dir / "collect-stats.json").string();
    std::ofstream probe(stats_path_, std::ios::app);
    if (!probe) return "cannot write " + stats_path_ + ": " + std::strerror(errno);
  }
  if (options_.reduce && store::is_clickhouse_url(options_.out)) {
    return "--reduce works with the embedded store only, not with " + options_.out;
  }
  std::string error;
  std::unique_ptr<store::TraceIndex> index =
      store::open_trace_index(options_.out, &error, options_.collector_id);
  if (!index) return error;
  index_ = std::make_unique<LockedTraceIndex>(std::move(index));
  if (options_.forward) forwarder_ = std::make_unique<OtlpForwarder>(*options_.forward);
  if (!log_dir_.empty()) {
    pool_ = std::make_unique<AnalysisPool>(options_.workers, options_.commit_interval);
  }
  if (std::string e = listener_.open(); !e.empty()) return e;
  last_commit_ = std::chrono::steady_clock::now();
  write_stats();
  return "";
}

void Collector::run(const std::atomic<bool>& stop) {
  // A storage error stops the listener through the sinks returning false.
  listener_.run(stop);
}

format::RecordSink& Collector::on_open(size_t client, const ClientStats& stats) {
  if (clients_.size() <= client) clients_.resize(client + 1);
  // Ids continue after those already in the index (a restarted collector).
  const int64_t id = index_->next_client_id();
  clients_[client] = std::make_unique<Client>(*this, id, stats.peer);
  index_->put_client(clients_[client]->report().record);
  dirty_ = true;
  return *clients_[client];
}

void ClientTotals::add(const ClientReport& c) {
  ++clients;
  received += c.record.received;
  stored += c.record.stored;
  rejected += c.record.rejected;
  traces += c.traces;
  invalid_traces += c.invalid_traces;
  reduced_traces += c.reduced_traces;
}

void Collector::on_close(size_t client, const ClientStats& stats) {
  if (client >= clients_.size() || !clients_[client]) return;
  std::unique_ptr<Client> c = std::move(clients_[client]);
  c->close(stats);
  c->protocol = stats.protocol;
  c->duplicate_chunks = stats.duplicate_chunks;
  dirty_ = true;
  if (c->analysed()) return retire(std::move(c));
  closing_.push_back(std::move(c));  // its worker is still reading its log
}

void Collector::retire(std::unique_ptr<Client> c) {
  ClientReport report = c->report();
  report.protocol = c->protocol;
  report.duplicate_chunks = c->duplicate_chunks;
  index_->put_client(report.record);
  // Only the report stays, and only the last listed_closed_clients of them
  // (the store has every client): a closed client's sinks and buffers were
  // a collector's memory growing with every connection it ever served
  // (73 MiB over the 19,223 processes of a 10-minute soak, 2026-12-03).
  closed_totals_.add(report);
  closed_.push_back(std::move(report));
  while (closed_.size() > options_.listen.listed_closed_clients) closed_.pop_front();
  dirty_ = true;
}

void Collector::retire_analysed() {
  for (auto& c : closing_) {
    if (c->analysed()) retire(std::move(c));
  }
  std::erase(closing_, nullptr);
}

void Collector::hold_back() {
  const uint64_t backlog = backlog_total_.load(std::memory_order_relaxed);
  peak_backlog_ = std::max(peak_backlog_, backlog);
  if (!pool_) return;
  bool waited = false;
  if (backlog > options_.max_backlog_bytes) {
    // Until the workers are back at half the bound: reading resumes in
    // bursts, not a chunk at a time. Confirmations wait meanwhile, so
    // native senders hold their chunks (and block once their buffers are
    // full).
    const uint64_t resume = options_.max_backlog_bytes / 2;
    pool_->wait_until([&] { return backlog_total_.load(std::memory_order_relaxed) <= resume; });
    waited = true;
  }
  // Closed clients waiting for a worker, however small their logs (each
  // keeps its counts and its log's name until analysed).
  while (closing_.size() > kMaxClientsBeingAnalysed) {
    pool_->wait_for_progress();
    retire_analysed();
    waited = true;
  }
  // Busy, not idle: a drain must not count this wait as a silence.
  if (waited) listener_.note_progress();
}

NativeChunkSink* Collector::chunk_sink(size_t client) {
  // Without logs (ClickHouse alone) the chunks' bytes are not kept.
  if (log_dir_.empty() || client >= clients_.size()) return nullptr;
  return clients_[client].get();
}

bool Collector::on_delivered(size_t client) {
  const bool stored = client < clients_.size() && clients_[client] && clients_[client]->delivered();
  hold_back();
  return stored;
}

bool Collector::on_tick() {
  // Queued connections never reached on_open; the stats file shows them too.
  if (listener_.queued_connections() != queued_written_) dirty_ = true;
  // The workers indexed traces (of bytes received earlier, perhaps of a
  // client now silent): they become visible with the next commit.
  if (pool_ && pool_->progress() != progress_committed_) dirty_ = true;
  // A worker could not read a client's log back: the client says so now.
  if (const uint64_t e = analysis_errors_.load(std::memory_order_acquire); e != errors_noted_) {
    errors_noted_ = e;
    for (const auto& c : clients_) {
      if (c) c->note_analysis_error();
    }
  }
  retire_analysed();
  hold_back();
  if (dirty_ && std::chrono::steady_clock::now() - last_commit_ >= options_.commit_interval) {
    commit();
  }
  // A store that failed takes nothing more: stop instead of receiving
  // records that could not be kept.
  return error_.empty() && !index_->failed();
}

void Collector::commit() {
  if (pool_) progress_committed_ = pool_->progress();
  // Closed clients were written for the last time when they closed; a
  // long-running collector has seen many.
  for (const auto& c : clients_) {
    if (!c || !c->is_open()) continue;
    c->flush_analysis();
    c->flush_log();
    index_->put_client(c->report().record);
  }
  // In the logs: native senders may let go of what they sent so far. (The
  // index is derived from the logs; without logs it must commit first.)
  if (!log_dir_.empty() && can_confirm()) listener_.confirm_stored();
  if (std::string e = index_->commit(); !e.empty()) fail(e);
  if (log_dir_.empty() && can_confirm()) listener_.confirm_stored();
  write_stats();
  dirty_ = false;
  last_commit_ = std::chrono::steady_clock::now();
}

void Collector::fail(const std::string& error) {
  if (error_.empty()) error_ = error;
}

std::vector<ClientReport> Collector::clients() const {
  std::vector<ClientReport> out(closed_.begin(), closed_.end());
  // The closed clients still being analysed, up to the same bound as those
  // done (the totals count them all).
  for (size_t i = 0; i < closing_.size() && i < options_.listen.listed_closed_clients; ++i) {
    const auto& c = closing_[i];
    out.push_back(c->report());
    out.back().protocol = c->protocol;
    out.back().duplicate_chunks = c->duplicate_chunks;
  }
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (!clients_[i]) continue;
    out.push_back(clients_[i]->report());
    if (const ClientStats* connection = listener_.open_client(i)) {
      out.back().protocol = connection->protocol;
      out.back().duplicate_chunks = connection->duplicate_chunks;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ClientReport& a, const ClientReport& b) { return a.record.id < b.record.id; });
  return out;
}

ClientTotals Collector::totals() const {
  ClientTotals t = closed_totals_;
  for (const auto& c : clients_) {
    if (c) t.add(c->report());
  }
  for (const auto& c : closing_) t.add(c->report());
  return t;
}

void Collector::write_stats() {
  if (stats_path_.empty()) return;  // ClickHouse without a log directory
  nlohmann::json clients = nlohmann::json::array();
  const std::vector<ClientReport> listed = this->clients();
  for (const ClientReport& c : listed) {
    const store::ClientRecord& r = c.record;
    clients.push_back({{"id", r.id},
                       {"peer", r.peer},
                       {"log_file", r.log_file},
                       {"open", c.open},
                       {"protocol", c.protocol},
                       {"received", r.received},
                       {"stored", r.stored},
                       {"rejected", r.rejected},
                       {"undecoded_bytes", r.undecoded_bytes},
                       {"traces", c.traces},
                       {"invalid_traces", c.invalid_traces},
                       {"reduced_traces", c.reduced_traces},
                       {"duplicate_chunks", c.duplicate_chunks},
                       {"error", r.error}});
  }
  const ClientTotals t = totals();
  const nlohmann::json doc = {
      {"listen", options_.listen.bind_address + ":" + std::to_string(listener_.port())},
      {"received", t.received},
      {"stored", t.stored},
      {"rejected", t.rejected},
      {"traces", t.traces},
      {"invalid_traces", t.invalid_traces},
      {"reduce", options_.reduce},
      {"reduced_traces", t.reduced_traces},
      {"clients_total", t.clients},
      {"clients_not_listed", t.clients - listed.size()},
      {"queued_connections", queued_written_ = listener_.queued_connections()},
      {"unserved_connections", listener_.unserved_connections()},
      {"unserved_bytes", listener_.unserved_bytes()},
      {"peak_open_clients", listener_.peak_connections()},
      {"backlog_bytes", backlog_bytes()},
      {"clients_being_analysed", closing_.size()},
      {"peak_backlog_bytes", peak_backlog_},
      {"error", error_},
      {"clients", clients}};
  // Write then rename, so a reader never sees half a file.
  const std::string tmp = stats_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out) return fail("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, stats_path_, ec);
  if (ec) fail("cannot write " + stats_path_ + ": " + ec.message());
}

std::string Collector::finish() {
  if (finished_ || !index_) return error_;
  finished_ = true;
  // The listener has closed every connection when run() returns; close any
  // client it never got to (run() not called).
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (!clients_[i] || !clients_[i]->is_open()) continue;
    ClientStats last;
    if (const ClientStats* connection = listener_.open_client(i)) {
      last.protocol = connection->protocol;
      last.duplicate_chunks = connection->duplicate_chunks;
    }
    on_close(i, last);
  }
  // The workers read every closed client's log to its end.
  if (pool_) {
    pool_->wait_until([&] {
      return std::all_of(closing_.begin(), closing_.end(),
                         [](const std::unique_ptr<Client>& c) { return c->analysis_done(); });
    });
    retire_analysed();
    pool_->stop();
  }
  commit();
  if (std::string e = index_->finish(); !e.empty()) fail(e);
  // The spans still queued for the OTLP receiver get their chance to go.
  if (forwarder_) forwarder_->shutdown(options_.forward->timeout);
  write_stats();
  return error_;
}

OtlpForwardStats Collector::forward_stats() const {
  return forwarder_ ? forwarder_->stats() : OtlpForwardStats{};
}

}  // namespace sonde::collect
