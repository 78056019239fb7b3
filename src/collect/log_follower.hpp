// Reads one client's log file as the listener thread writes it, and feeds
// its records to the client's reconstruction on an analysis worker. The
// log is the queue between receiving and analysing: the listener stores a
// chunk (and confirms it to the sender) without waiting for the traces in
// it to be reconstructed, so a burst from a fast sender costs disk space
// for a while, not the sender's time; the reconstruction catches up when
// the burst ends (the lag is bounded: collector.hpp, max_backlog_bytes).
//
// Threads: publish() and end_of_input() are the listener's; step() and
// tick() the worker's; backlog(), done() and error() anyone's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "collect/client_analysis.hpp"
#include "collect/connection_decoder.hpp"
#include "collect/stored_chunks.hpp"

namespace sonde::collect {

class LogFollower {
 public:
  // `errors`, if given, counts the followers whose reading stopped on an
  // error (so that the collector looks for them only when there are some).
  // `backlog_total`, shared by every follower of a collector, counts the
  // bytes published and not yet read.
  LogFollower(std::string path, std::string peer, ClientAnalysis& analysis,
              std::atomic<uint64_t>& backlog_total, std::atomic<uint64_t>* errors = nullptr);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  // The log file holds `bytes` bytes now (never fewer than before).
  void publish(uint64_t bytes);
  // No more bytes will be published (after the last publish()).
  void end_of_input();

  enum class Step { kIdle, kProgress, kFinished };
  // Reads and reconstructs up to `max_bytes` more of the log, through
  // `scratch` (the worker's read buffer). kFinished once: the input ended,
  // everything was read and the reconstruction finished; the worker does
  // not call step() again.
  Step step(size_t max_bytes, std::string& scratch);
  // The worker's: whether reading began (the follower then holds a
  // reconstruction until it finishes).
  bool started() const { return decoder_ != nullptr; }
  // No more bytes will come (any thread).
  bool ended() const { return input_ended_.load(std::memory_order_acquire); }
  // Periodic, on the worker, at the commit interval: the reduction's
  // window closes (reduced traces become visible).
  void tick() { analysis_.flush(); }

  uint64_t backlog() const;
  // The worker is done with this follower (after kFinished): it may be
  // destroyed.
  bool done() const { return done_.load(std::memory_order_acquire); }
  void set_done() { done_.store(true, std::memory_order_release); }
  // Why reading the log stopped early ("" if it did not), any thread: the
  // client's traces after that point are not in the index (its log still
  // holds its records). failed() is the same, lock-free.
  std::string error() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }

 private:
  void fail(const std::string& why);

  std::string path_;
  std::string peer_;
  ClientAnalysis& analysis_;
  std::atomic<uint64_t>& backlog_total_;
  std::atomic<uint64_t>* errors_;
  std::atomic<uint64_t> published_{0};
  std::atomic<bool> input_ended_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex error_mu_;
  std::string error_;  // under error_mu_, set once
  // The worker's.
  std::atomic<uint64_t> consumed_{0};           // written by the worker only
  StoredChunks stored_;                         // a log holds each chunk once: none is skipped
  std::unique_ptr<ConnectionDecoder> decoder_;  // from the first read to the end
  bool finished_ = false;
};

}  // namespace sonde::collect
