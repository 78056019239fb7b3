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

// One monitored process: its log file, its reconstructor, its counts.
// The store's sink, and the OTLP forwarder too when there is one.
class ForwardingSink final : public analysis::TraceSink {
 public:
  ForwardingSink(analysis::TraceSink& store, OtlpForwarder* forward)
      : store_(store), forward_(forward) {}
  void on_trace(const analysis::Trace& trace) override {
    store_.on_trace(trace);
    if (forward_ != nullptr) forward_->on_trace(trace);
  }
  void on_invalid_trace(const analysis::InvalidTrace& trace) override {
    store_.on_invalid_trace(trace);
  }

 private:
  analysis::TraceSink& store_;
  OtlpForwarder* forward_;
};

class Collector::Client final : public format::RecordSink,
                                public NativeChunkSink,
                                private format::TypedFlowSink {
 public:
  Client(Collector& owner, int64_t id, const std::string& peer)
      : owner_(owner),
        traces_(*owner.index_, id),
        reducing_(owner.options_.reduce ? std::make_unique<store::ReducingIndexSink>(
                                              *owner.index_, id, owner.options_.reduction)
                                        : nullptr),
        sink_(reducing_ ? static_cast<analysis::TraceSink&>(*reducing_) : traces_,
              owner.forwarder_.get()),
        reconstructor_(
            std::make_unique<analysis::TraceReconstructor>(sink_, reconstruction(owner.options_))) {
    report_.record.id = id;
    report_.record.peer = peer;
    report_.open = true;
    if (!owner.log_dir_.empty()) {
      report_.record.log_file = "log/client-" + std::to_string(id) + ".sonde";
      log_path_ = (fs::path(owner.log_dir_) / report_.record.log_file).string();
    }
  }

  bool keeps_log() const { return !log_path_.empty(); }

  bool on_record(const format::Record& r) override {
    if (!keeps_log() || raw_) {
      // Stored once the reconstruction has it (no log), or with its chunk
      // (a native stream's bytes, on_native_chunk).
      count_received();
      reconstructor_->on_record(r);
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
    reconstructor_->on_record(r);
    owner_.dirty_ = true;
    return owner_.index_->error().empty();
  }

  // A native stream's flow records come in typed form, straight to the
  // reconstructor's fast path, counted as the records they stand for.
  format::TypedFlowSink* typed_flow() override {
    typed_ = reconstructor_ ? reconstructor_->typed_flow() : nullptr;
    return typed_ != nullptr ? this : nullptr;
  }

  bool on_stream_header(std::string_view header) override {
    if (!keeps_log()) return true;
    raw_ = std::make_unique<RawNativeLog>(log_path_);
    return raw_->header(header) || raw_failed();
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

  // The connection is gone: close its open traces and its log.
  void close(const ClientStats& stats) {
    if (!report_.open) return;
    report_.open = false;
    reconstructor_->finish();
    if (reducing_) reducing_->flush();
    // Only the counts stay: a long-running collector sees many connections.
    reconstructor_.reset();
    report_.record.undecoded_bytes = stats.undecoded_bytes;
    report_.record.error = stats.error;
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
    log_.reset();
    raw_.reset();
  }

  ClientReport report() const {
    ClientReport r = report_;
    r.traces = reducing_ ? reducing_->valid() : traces_.valid();
    r.invalid_traces = reducing_ ? reducing_->invalid() : traces_.invalid();
    r.reduced_traces = reducing_ ? reducing_->reduced() : 0;
    return r;
  }

  bool is_open() const { return report_.open; }
  // After records were delivered (every native chunk decoded so far): true
  // when they are all in the log file, which is written in chunks of
  // kLogChunkBytes.
  bool delivered() {
    if (!keeps_log()) return false;  // confirmed after the index commit
    if (buffered_bytes() >= kLogChunkBytes) flush_log();
    return log_error_.empty() && buffered_bytes() == 0;
  }

  // Writes the log's buffered bytes to the file (before a commit that
  // confirms them to the sender).
  void flush_log() {
    if (!log_error_.empty()) return;
    if (raw_ && !raw_->flush()) {
      raw_failed();
      return;
    }
    if (!log_ || log_->flush()) return;
    log_error_ = log_->finish();
    if (log_error_.empty()) log_error_ = "cannot write " + report_.record.log_file;
    owner_.fail(log_error_);
  }
  // Stores the reduced traces of the open window (before a commit).
  void flush_reduced() {
    if (reducing_) reducing_->flush();
  }

 private:
  static analysis::ReconstructionOptions reconstruction(const CollectorOptions& o) {
    analysis::ReconstructionOptions r;
    r.max_open_traces = o.max_open_traces;
    r.trace_timeout_ns = o.trace_timeout_ns;
    return r;
  }

  // format::TypedFlowSink, for typed_flow().
  void on_source_begin() override { typed_->on_source_begin(); }
  void on_operation(uint32_t id, std::string_view signature, std::string_view component) override {
    typed_->on_operation(id, signature, component);
  }
  bool on_trace_start(const format::TypedTraceStart& start) override {
    count_received();
    typed_->on_trace_start(start);
    return taken();
  }
  bool on_operation_event(const format::TypedOperationEvent& event) override {
    count_received();
    typed_->on_operation_event(event);
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
  bool taken() const { return log_error_.empty() && owner_.index_->error().empty(); }

  size_t buffered_bytes() const {
    return raw_ ? raw_->buffered_bytes() : log_ ? log_->buffered_bytes() : 0;
  }

  void open_record_log() {
    format::NativeWriterOptions chunks;
    chunks.chunk_target = kLogChunkBytes;
    chunks.manual_flush = true;  // flush_log() cuts chunks where the sender's frames end
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
  store::IndexTraceSink traces_;
  std::unique_ptr<store::ReducingIndexSink> reducing_;  // with --reduce
  ForwardingSink sink_;
  std::unique_ptr<analysis::TraceReconstructor> reconstructor_;
  format::TypedFlowSink* typed_ = nullptr;        // the reconstructor's fast path
  std::string log_path_;                          // "" = keep no log
  std::unique_ptr<format::RecordLogWriter> log_;  // Kieker's protocol: records encoded
  std::unique_ptr<RawNativeLog> raw_;             // native: the sender's chunks as received
  std::string log_error_;                         // why writing the log failed
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
  index_ = store::open_trace_index(options_.out, &error, options_.collector_id);
  if (!index_) return error;
  if (options_.forward) forwarder_ = std::make_unique<OtlpForwarder>(*options_.forward);
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
  clients_[client]->close(stats);
  ClientReport report = clients_[client]->report();
  report.protocol = stats.protocol;
  report.duplicate_chunks = stats.duplicate_chunks;
  index_->put_client(report.record);
  // Only the report stays, and only the last listed_closed_clients of them
  // (the store has every client): a closed client's sinks and buffers were
  // a collector's memory growing with every connection it ever served
  // (73 MiB over the 19,223 processes of a 10-minute soak, 2026-12-03).
  closed_totals_.add(report);
  closed_.push_back(std::move(report));
  while (closed_.size() > options_.listen.listed_closed_clients) closed_.pop_front();
  clients_[client].reset();
  dirty_ = true;
}

NativeChunkSink* Collector::chunk_sink(size_t client) {
  // Without logs (ClickHouse alone) the chunks' bytes are not kept.
  if (log_dir_.empty() || client >= clients_.size()) return nullptr;
  return clients_[client].get();
}

bool Collector::on_delivered(size_t client) {
  return client < clients_.size() && clients_[client] && clients_[client]->delivered();
}

bool Collector::on_tick() {
  // Queued connections never reached on_open; the stats file shows them too.
  if (listener_.queued_connections() != queued_written_) dirty_ = true;
  if (dirty_ && std::chrono::steady_clock::now() - last_commit_ >= options_.commit_interval) {
    commit();
  }
  // A store that failed takes nothing more: stop instead of receiving
  // records that could not be kept.
  return error_.empty() && index_->error().empty();
}

void Collector::commit() {
  // Closed clients were written for the last time when they closed; a
  // long-running collector has seen many.
  for (const auto& c : clients_) {
    if (!c || !c->is_open()) continue;
    c->flush_reduced();
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
