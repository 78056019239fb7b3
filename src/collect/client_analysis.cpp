#include "collect/client_analysis.hpp"

namespace sonde::collect {

// Traces per acquisition of the index's lock.
constexpr size_t kBatchTraces = 256;
// The copies' vectors kept for the next batch, at most this many
// executions in all per client (a few hundred KiB), or none.
constexpr size_t kMostKeptExecutions = 16384;

void BatchedIndexSink::on_trace(const analysis::Trace& trace) {
  ++valid_;
  if (batch_ <= 1) {
    index_.add(trace, client_);
    return;
  }
  if (used_ < pending_.size()) {
    pending_[used_] = trace;
  } else {
    pending_.push_back(trace);
  }
  if (++used_ >= batch_) flush();
}

void BatchedIndexSink::on_invalid_trace(const analysis::InvalidTrace& trace) {
  ++invalid_;
  index_.add_invalid(trace, client_);
}

void BatchedIndexSink::flush() {
  if (used_ == 0) return;
  index_.add_all(std::span<const analysis::Trace>(pending_.data(), used_), client_);
  used_ = 0;
  size_t kept = 0;
  for (const analysis::Trace& t : pending_) kept += t.executions.capacity();
  if (kept > kMostKeptExecutions) release();
}

void BatchedIndexSink::release() {
  flush();
  pending_ = {};
}

ClientAnalysis::ClientAnalysis(LockedTraceIndex& index, int64_t client,
                               const AnalysisSettings& settings, OtlpForwarder* forward,
                               bool batched)
    : reconstruction_(settings.reconstruction),
      traces_(index, client, batched ? kBatchTraces : 1),
      reducing_(settings.reduce
                    ? std::make_unique<store::ReducingIndexSink>(index, client, settings.reduction)
                    : nullptr),
      sink_(reducing_ ? static_cast<analysis::TraceSink&>(*reducing_) : traces_, forward) {}

format::RecordSink& ClientAnalysis::input() {
  if (!reconstructor_) {
    reconstructor_ = std::make_unique<analysis::TraceReconstructor>(sink_, reconstruction_);
  }
  return *reconstructor_;
}

void ClientAnalysis::flush() {
  if (reducing_) reducing_->flush();
  traces_.flush();
}

void ClientAnalysis::finish() {
  if (finished_) return;
  finished_ = true;
  if (reconstructor_) reconstructor_->finish();
  flush();
  // Only the counts stay: a long-running collector sees many connections.
  reconstructor_.reset();
  traces_.release();
  publish();
}

void ClientAnalysis::publish() const {
  traces_published_.store(reducing_ ? reducing_->valid() : traces_.valid(),
                          std::memory_order_relaxed);
  invalid_published_.store(reducing_ ? reducing_->invalid() : traces_.invalid(),
                           std::memory_order_relaxed);
  reduced_published_.store(reducing_ ? reducing_->reduced() : 0, std::memory_order_relaxed);
}

ClientAnalysis::Counts ClientAnalysis::counts() const {
  return {traces_published_.load(std::memory_order_relaxed),
          invalid_published_.load(std::memory_order_relaxed),
          reduced_published_.load(std::memory_order_relaxed)};
}

}  // namespace sonde::collect
