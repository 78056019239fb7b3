// Listens for monitored processes speaking sonde's native stream or Kieker's
// TCP protocol (connection_decoder.hpp tells them apart by the first byte)
// and hands their records to a RecordSink. Each connection has its own
// decoder and string registry, as in Kieker's multi-connection reader. One thread polls every
// socket, so the sink needs no locking; a slow sink slows reading and TCP's flow control pushes
// back on the senders instead of memory growing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/connection_decoder.hpp"
#include "format/operation_name.hpp"
#include "format/record.hpp"

namespace sonde::collect {

struct ListenerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 10133;  // Kieker's default TCP port; 0 = any free port
  // Served at once. More wait in the kernel's accept queue until one
  // closes, so their senders are held back rather than refused.
  size_t max_connections = 1024;
  // Closed connections whose stats clients() still lists; records() and
  // clients_total() count every connection. A long-running listener
  // serving short-lived senders accepts millions.
  size_t listed_closed_clients = 1000;
  // Return from run() once this many connections have been accepted and
  // closed again; 0 = run until stop is set.
  uint64_t stop_after_connections = 0;
  // On stop: every open connection is read until its sender closes it, and
  // queued ones are served as slots free, while data keeps arriving: the
  // drain ends once nothing arrived for `drain_idle`, or after
  // `drain_timeout` in all. A connection cut then keeps an error saying so
  // (what its sender still had in flight is lost); bytes already received
  // but not decoded are counted as undecoded.
  std::chrono::milliseconds drain_idle{10000};
  std::chrono::milliseconds drain_timeout{300000};
  // How a native stream's operations are named (format/operation_name.hpp):
  // Kieker's form when the records go into a Kieker log (`sonde listen
  // --to kieker-dat`).
  format::NameForm names = format::NameForm::kCpp;
  // Native streams get their decoded chunk count confirmed back (8 bytes,
  // little-endian) so the sender can let go of them. True: as soon as the
  // records are handed to the sink. False: only when the owner calls
  // confirm_stored() (the collector, after its log and index are written)
  // and when the connection closes (after on_close).
  bool confirm_when_decoded = true;
};

struct ClientStats {
  std::string peer;  // "address:port"
  uint64_t bytes = 0;
  uint64_t records = 0;
  std::string error;             // protocol error that closed the connection, or ""
  uint64_t undecoded_bytes = 0;  // received but not decoded (after an error, or a cut frame)
  bool open = true;
  std::string protocol;           // "native", "kieker", or "" before the first byte
  uint64_t chunks = 0;            // native: chunks decoded
  uint64_t duplicate_chunks = 0;  // native: resent chunks already stored, skipped
};

// For callers that keep state per connection (the collector: one log file
// and one trace reconstructor per monitored process). Called from the
// listener's one thread.
class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  // A new connection: returns the sink for its records (must live until on_close).
  virtual format::RecordSink& on_open(size_t client, const ClientStats& stats) = 0;
  // After on_open: where a native stream's checked chunks go as received
  // (the collector's client log), or null.
  virtual NativeChunkSink* chunk_sink(size_t /*client*/) { return nullptr; }
  // The connection is closed (by the peer, an error, or the listener stopping).
  virtual void on_close(size_t client, const ClientStats& stats) = 0;
  // Once per poll round (at least every 100 ms): time for periodic work.
  // Returning false stops the listener (e.g. the store failed).
  virtual bool on_tick() { return true; }
  // After records of the connection were delivered: true if everything
  // delivered so far is stored, so the listener confirms it to a native
  // sender at once (instead of at the owner's next confirm_stored()).
  virtual bool on_delivered(size_t /*client*/) { return false; }
  // False once storing failed: nothing more is confirmed to native senders
  // (they keep their chunks and count them lost if no one takes them).
  virtual bool can_confirm() const { return true; }
};

class RecordListener {
 public:
  // All connections' records go to one sink.
  RecordListener(format::RecordSink& sink, ListenerOptions options);
  // Each connection gets its own sink from the handler.
  RecordListener(ConnectionHandler& handler, ListenerOptions options);
  ~RecordListener();
  RecordListener(const RecordListener&) = delete;
  RecordListener& operator=(const RecordListener&) = delete;

  // Binds and listens. Returns "" or an error naming the address and reason.
  std::string open();
  // The port actually bound (useful with port 0).
  uint16_t port() const { return bound_port_; }

  // Serves until `stop` becomes true (checked at least every 100 ms), the
  // connection budget is used up, or a sink asks to stop. Connections still
  // open then are drained of what already arrived and closed.
  void run(const std::atomic<bool>& stop);

  // Confirms to every open native stream the chunks decoded so far: the
  // owner has stored them (see ListenerOptions::confirm_when_decoded).
  void confirm_stored();

  // The open connections and the last listed_closed_clients closed ones,
  // by client index.
  std::vector<ClientStats> clients() const;
  // Connection `client` while it is open, else null.
  const ClientStats* open_client(size_t client) const;
  // Every connection accepted so far.
  uint64_t clients_total() const { return next_client_; }
  // Closed connections whose stats carry an error (listed or not).
  uint64_t clients_with_errors() const { return closed_with_errors_; }
  uint64_t records() const;
  // Connections waiting in the accept queue now (over max_connections).
  size_t queued_connections() const;
  // The handler was busy, not idle (the collector waiting for its analysis
  // workers): the drain's idle clock starts again.
  void note_progress() { last_progress_ = std::chrono::steady_clock::now(); }
  // Connections still queued when serving ended, never read, and the bytes
  // they had sent (counted, then closed).
  uint64_t unserved_connections() const { return unserved_connections_; }
  uint64_t unserved_bytes() const { return unserved_bytes_; }
  // The most connections open at once so far.
  size_t peak_connections() const { return peak_connections_; }

 private:
  struct Connection;
  void accept_new();
  // Reads what is available; returns false when the connection is done.
  bool serve(Connection& c);
  void close_connection(Connection& c);
  // One poll round over the open connections; false on a poll error.
  void serve_ready(int timeout_ms, bool accept);
  void drain();
  void count_unserved();
  void confirm(Connection& c);

  format::RecordSink* sink_ = nullptr;  // shared sink, or null with a handler
  ConnectionHandler* handler_ = nullptr;
  ListenerOptions options_;
  int listen_fd_ = -1;
  uint16_t bound_port_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  size_t next_client_ = 0;                                     // the next connection's client index
  std::unordered_map<size_t, ClientStats> open_clients_;       // by client index
  std::deque<std::pair<size_t, ClientStats>> closed_clients_;  // the last listed_closed_clients
  uint64_t closed_with_errors_ = 0;
  uint64_t closed_records_ = 0;  // every closed connection's records
  uint64_t closed_connections_ = 0;
  uint64_t unserved_connections_ = 0;
  uint64_t unserved_bytes_ = 0;
  size_t peak_connections_ = 0;
  bool sink_stopped_ = false;
  std::chrono::steady_clock::time_point last_progress_;  // last bytes read
  StoredChunks stored_chunks_;  // per native stream id, across its connections
};

}  // namespace sonde::collect
