#include "collect/log_follower.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sonde::collect {

LogFollower::LogFollower(std::string path, std::string peer, ClientAnalysis& analysis,
                         std::atomic<uint64_t>& backlog_total, std::atomic<uint64_t>* errors)
    : path_(std::move(path)),
      peer_(std::move(peer)),
      analysis_(analysis),
      backlog_total_(backlog_total),
      errors_(errors) {}

LogFollower::~LogFollower() {
  // What was never read leaves the collector's total with this follower.
  backlog_total_.fetch_sub(backlog(), std::memory_order_relaxed);
}

void LogFollower::publish(uint64_t bytes) {
  const uint64_t before = published_.load(std::memory_order_relaxed);
  if (bytes <= before) return;
  backlog_total_.fetch_add(bytes - before, std::memory_order_relaxed);
  published_.store(bytes, std::memory_order_release);
}

void LogFollower::end_of_input() { input_ended_.store(true, std::memory_order_release); }

uint64_t LogFollower::backlog() const {
  // Read on another thread, it may be a moment old.
  const uint64_t published = published_.load(std::memory_order_acquire);
  const uint64_t consumed = consumed_.load(std::memory_order_relaxed);
  return published > consumed ? published - consumed : 0;
}

void LogFollower::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (!error_.empty()) return;
  error_ = why;
  failed_.store(true, std::memory_order_release);
  if (errors_ != nullptr) errors_->fetch_add(1, std::memory_order_release);
}

std::string LogFollower::error() const {
  std::lock_guard<std::mutex> lock(error_mu_);
  return error_;
}

LogFollower::Step LogFollower::step(size_t max_bytes, std::string& scratch) {
  if (finished_) return Step::kFinished;
  uint64_t consumed = consumed_.load(std::memory_order_relaxed);
  // The end first: the last publish() happened before it.
  const bool ended = input_ended_.load(std::memory_order_acquire);
  const uint64_t published = published_.load(std::memory_order_acquire);
  const bool reading = !failed_.load(std::memory_order_relaxed);
  if (consumed < published && reading) {
    // Opened for each step: a client waiting for its next bytes holds no
    // descriptor (the listener already holds its socket and its log).
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors is passing: the next step tries again.
      if (errno == EMFILE || errno == ENFILE) return Step::kIdle;
      fail("cannot read " + path_ + " back: " + std::strerror(errno));
    } else {
      if (!decoder_)
        decoder_ = std::make_unique<ConnectionDecoder>(peer_, analysis_.input(), stored_);
      const size_t want = static_cast<size_t>(std::min<uint64_t>(published - consumed, max_bytes));
      scratch.resize(want);
      const ssize_t n = ::pread(fd, scratch.data(), want, static_cast<off_t>(consumed));
      const int read_errno = errno;
      ::close(fd);
      if (n <= 0) {
        fail(
            "cannot read " + path_ + " back at offset " + std::to_string(consumed) + ": " +
            (n == 0 ? std::string("the file is shorter than written") : std::strerror(read_errno)));
      } else {
        if (!decoder_->feed(scratch.data(), static_cast<size_t>(n))) {
          fail("reconstructing from " + path_ + ": " +
               (decoder_->failed() ? decoder_->error()
                                   : std::string("the reconstruction stopped taking records")));
        }
        consumed_.store(consumed + static_cast<uint64_t>(n), std::memory_order_relaxed);
        backlog_total_.fetch_sub(static_cast<uint64_t>(n), std::memory_order_relaxed);
        // Traces, not the reduction's window: that closes at the commit
        // interval (tick()), however the log happens to be cut into steps.
        analysis_.flush_traces();
        analysis_.publish();
        return Step::kProgress;
      }
    }
  }
  if (failed_.load(std::memory_order_relaxed) && consumed < published) {
    // Reading stopped: the rest is skipped (the error names it) so that
    // the collector's backlog does not wait for it.
    backlog_total_.fetch_sub(published - consumed, std::memory_order_relaxed);
    consumed_.store(consumed = published, std::memory_order_relaxed);
  }
  if (!ended || consumed < published) return Step::kIdle;
  if (!failed_.load(std::memory_order_relaxed) && decoder_ && !decoder_->finish()) {
    fail("reconstructing from " + path_ + ": " + decoder_->error());
  }
  analysis_.finish();
  decoder_.reset();
  finished_ = true;
  return Step::kFinished;
}

}  // namespace sonde::collect
