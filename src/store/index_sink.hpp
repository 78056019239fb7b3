// Where reconstructed traces are written: the embedded SQLite index
// (index_writer.hpp) or ClickHouse (clickhouse_writer.hpp). The collector
// and `sonde index` write through this interface, so both stores receive
// exactly the same traces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analysis/model/trace_model.hpp"
#include "analysis/reconstruct/trace_reducer.hpp"

namespace sonde::store {

// What the collector knows about one connection.
struct ClientRecord {
  int64_t id = 0;
  std::string peer;
  std::string log_file;  // relative to the log directory ("" without one)
  uint64_t received = 0;
  uint64_t stored = 0;
  uint64_t rejected = 0;
  uint64_t undecoded_bytes = 0;
  std::string error;
};

class TraceIndex {
 public:
  virtual ~TraceIndex() = default;
  // `client` tags the trace with the connection it came from (0: a log).
  virtual void add(const analysis::Trace& trace, int64_t client) = 0;
  virtual void add_invalid(const analysis::InvalidTrace& trace, int64_t client) = 0;
  virtual void put_client(const ClientRecord& client) = 0;
  // Trace reduction (`sonde collect --reduce`): a valid trace that only
  // feeds the per-operation aggregates and call edges, and the reduced
  // trace it became part of. A store without reduction sets error().
  virtual void count(const analysis::Trace& trace) = 0;
  virtual void add_reduced(const analysis::ReducedTrace& trace, int64_t client) = 0;
  // The lowest client id not used in this store yet.
  virtual int64_t next_client_id() const = 0;
  // Makes everything added so far visible to readers. Returns "" or the error.
  virtual std::string commit() = 0;
  // Final commit; returns "" or the first error.
  virtual std::string finish() = 0;
  // The first write error, or "": after one, nothing more is written.
  virtual const std::string& error() const = 0;
};

// Opens the store named by `out`: "clickhouse://HOST:PORT/DATABASE" or a
// directory (DIR/index.sqlite). Returns null and sets *error on failure.
// `collector_id` (ClickHouse only; clickhouse_writer.hpp): the id space of
// this collector among several writing one database.
std::unique_ptr<TraceIndex> open_trace_index(const std::string& out, std::string* error,
                                             uint32_t collector_id = 0);

bool is_clickhouse_url(const std::string& out);

// The reason text of an invalid trace, as `sonde traces --invalid` prints it.
std::string invalid_trace_problem(const analysis::InvalidTrace& trace);

// Adapts a TraceIndex to a TraceSink for one client's reconstructor.
class IndexTraceSink : public analysis::TraceSink {
 public:
  IndexTraceSink(TraceIndex& index, int64_t client) : index_(index), client_(client) {}
  void on_trace(const analysis::Trace& trace) override {
    ++valid_;
    index_.add(trace, client_);
  }
  void on_invalid_trace(const analysis::InvalidTrace& trace) override {
    ++invalid_;
    index_.add_invalid(trace, client_);
  }
  uint64_t valid() const { return valid_; }
  uint64_t invalid() const { return invalid_; }

 private:
  TraceIndex& index_;
  int64_t client_;
  uint64_t valid_ = 0;
  uint64_t invalid_ = 0;
};

// For one client with reduction on: valid traces are counted in the
// aggregates and reduced; reduced and invalid traces are stored.
class ReducingIndexSink : public analysis::TraceSink, private analysis::ReducedTraceSink {
 public:
  ReducingIndexSink(TraceIndex& index, int64_t client, analysis::ReductionOptions options)
      : index_(index),
        client_(client),
        invalid_(index, client),
        reducer_(*this, invalid_, options) {}
  void on_trace(const analysis::Trace& trace) override {
    index_.count(trace);
    reducer_.on_trace(trace);
  }
  void on_invalid_trace(const analysis::InvalidTrace& trace) override {
    reducer_.on_invalid_trace(trace);
  }
  // Stores what the open window holds (the collector does so at each commit).
  void flush() { reducer_.flush(); }
  uint64_t valid() const { return reducer_.traces_in(); }
  uint64_t invalid() const { return invalid_.invalid(); }
  uint64_t reduced() const { return reducer_.reduced_out(); }

 private:
  void on_reduced_trace(const analysis::ReducedTrace& trace) override {
    index_.add_reduced(trace, client_);
  }
  TraceIndex& index_;
  int64_t client_;
  IndexTraceSink invalid_;
  analysis::TraceReducer reducer_;
};

}  // namespace sonde::store
