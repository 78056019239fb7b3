#include "collect/log_follower.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sonde::collect {

LogFollower::LogFollower(std::string path, std::string peer, ClientAnalysis& analysis,
                         std::atomic<uint64_t>& backlog_total)
    : path_(std::move(path)),
      peer_(std::move(peer)),
      analysis_(analysis),
      backlog_total_(backlog_total) {}

LogFollower::~LogFollower() {
  if (fd_ >= 0) ::close(fd_);
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
  if (error_.empty()) error_ = why;
}

LogFollower::Step LogFollower::step(size_t max_bytes, std::string& scratch) {
  if (finished_) return Step::kFinished;
  uint64_t consumed = consumed_.load(std::memory_order_relaxed);
  // The end first: the last publish() happened before it.
  const bool ended = input_ended_.load(std::memory_order_acquire);
  const uint64_t published = published_.load(std::memory_order_acquire);
  if (consumed < published && error_.empty()) {
    if (fd_ < 0) {
      fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) fail("cannot read " + path_ + " back: " + std::strerror(errno));
    }
    if (fd_ >= 0 && !decoder_) {
      decoder_ = std::make_unique<ConnectionDecoder>(peer_, analysis_.input(), stored_);
    }
    if (fd_ >= 0) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(published - consumed, max_bytes));
      scratch.resize(want);
      const ssize_t n = ::pread(fd_, scratch.data(), want, static_cast<off_t>(consumed));
      if (n <= 0) {
        fail("cannot read " + path_ + " back at offset " + std::to_string(consumed) + ": " +
             (n == 0 ? std::string("the file is shorter than written") : std::strerror(errno)));
      } else {
        if (!decoder_->feed(scratch.data(), static_cast<size_t>(n)) && decoder_->failed()) {
          fail("reconstructing from " + path_ + ": " + decoder_->error());
        }
        consumed_.store(consumed + static_cast<uint64_t>(n), std::memory_order_relaxed);
        backlog_total_.fetch_sub(static_cast<uint64_t>(n), std::memory_order_relaxed);
        analysis_.flush();
        analysis_.publish();
        return Step::kProgress;
      }
    }
  }
  if (!error_.empty() && consumed < published) {
    // Reading stopped: the rest is skipped (the error names it) so that
    // the collector's backlog does not wait for it.
    backlog_total_.fetch_sub(published - consumed, std::memory_order_relaxed);
    consumed_.store(consumed = published, std::memory_order_relaxed);
  }
  if (!ended || consumed < published) return Step::kIdle;
  if (error_.empty() && decoder_ && !decoder_->finish()) {
    fail("reconstructing from " + path_ + ": " + decoder_->error());
  }
  analysis_.finish();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  decoder_.reset();
  finished_ = true;
  return Step::kFinished;
}

}  // namespace sonde::collect
