// One client's trace reconstruction and what it stores into: the index
// (every trace, or reduced ones with --reduce) and the OTLP forwarder.
// Fed either inline by the listener thread (a collector that keeps no
// logs) or by a LogFollower on an analysis worker, which reads the
// client's log as the listener stores it. Its counts are published for the
// listener thread, which writes the stats.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/reconstruct/trace_reconstructor.hpp"
#include "analysis/reconstruct/trace_reducer.hpp"
#include "collect/locked_trace_index.hpp"
#include "collect/otlp_forwarder.hpp"
#include "store/index_sink.hpp"

namespace sonde::collect {

struct AnalysisSettings {
  analysis::ReconstructionOptions reconstruction;
  bool reduce = false;
  analysis::ReductionOptions reduction;
};

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

// The index's sink for one client: valid traces are copied into a batch
// and added a batch at a time (their strings stay in the reconstructor's
// pool, which outlives the batch: ClientAnalysis flushes before letting
// the reconstructor go).
class BatchedIndexSink final : public analysis::TraceSink {
 public:
  // `batch`: traces per acquisition of the index's lock (1: none held back).
  BatchedIndexSink(LockedTraceIndex& index, int64_t client, size_t batch)
      : index_(index), client_(client), batch_(batch) {}
  void on_trace(const analysis::Trace& trace) override;
  void on_invalid_trace(const analysis::InvalidTrace& trace) override;
  void flush();
  // That, and frees the kept trace copies (a finished client).
  void release();
  uint64_t valid() const { return valid_; }
  uint64_t invalid() const { return invalid_; }

 private:
  LockedTraceIndex& index_;
  int64_t client_;
  size_t batch_;
  // The first `used_` are held back. Kept past a flush and assigned over,
  // so that each trace's copy reuses a vector instead of allocating one.
  std::vector<analysis::Trace> pending_;
  size_t used_ = 0;
  uint64_t valid_ = 0, invalid_ = 0;
};

class ClientAnalysis {
 public:
  // `batched`: traces go to the index a batch at a time (a worker; not
  // the listener thread, which has no other thread to contend with).
  ClientAnalysis(LockedTraceIndex& index, int64_t client, const AnalysisSettings& settings,
                 OtlpForwarder* forward, bool batched);

  // Where the client's records go (the reconstructor; typed flow records
  // through its fast path). Only the thread that analyses this client.
  // The reconstructor is made on first use: a client waiting for its
  // worker holds no reconstruction state.
  format::RecordSink& input();
  // Hands the traces held back to the index (a worker after each step).
  void flush_traces() { traces_.flush(); }
  // That, and with --reduce what the open window holds (before each
  // commit; a worker at each tick of the commit interval).
  void flush();
  // End of input: closes the open traces and stores them. Once.
  void finish();
  // Makes the counts so far visible to counts() on other threads.
  void publish() const;

  struct Counts {
    uint64_t traces = 0, invalid_traces = 0, reduced_traces = 0;
  };
  Counts counts() const;  // any thread: as of the last publish()

 private:
  analysis::ReconstructionOptions reconstruction_;
  BatchedIndexSink traces_;
  std::unique_ptr<store::ReducingIndexSink> reducing_;  // with --reduce
  ForwardingSink sink_;
  std::unique_ptr<analysis::TraceReconstructor> reconstructor_;  // from input() to finish()
  bool finished_ = false;
  mutable std::atomic<uint64_t> traces_published_{0}, invalid_published_{0}, reduced_published_{0};
};

}  // namespace sonde::collect
