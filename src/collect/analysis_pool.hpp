// The collector's analysis workers: a fixed number of threads, each
// reconstructing the traces of the clients assigned to it (client id
// modulo the number of workers) from their logs (log_follower.hpp), so
// that the connections' reconstruction and indexing run in parallel with
// receiving and with each other. A client is analysed by one worker only:
// its reconstructor is never shared.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/log_follower.hpp"

namespace sonde::collect {

class AnalysisPool {
 public:
  // `tick`: how often each worker lets its followers store what they hold
  // back (reduction windows), as the collector's commit interval.
  AnalysisPool(size_t workers, std::chrono::milliseconds tick);
  ~AnalysisPool();  // stop() and join
  AnalysisPool(const AnalysisPool&) = delete;
  AnalysisPool& operator=(const AnalysisPool&) = delete;

  // Hands `follower` to worker `client` modulo the number of workers; it
  // stays alive until follower.done().
  void add(LogFollower& follower, uint64_t client);
  // New bytes of `client` were published: its worker looks again.
  void wake(uint64_t client) { wake(*workers_[client % workers_.size()]); }
  // Waits until `done()` holds, re-checking whenever a worker made
  // progress (at most every 10 ms otherwise).
  template <class Done>
  void wait_until(Done done) {
    std::unique_lock<std::mutex> lock(progress_mu_);
    while (!done()) progress_cv_.wait_for(lock, std::chrono::milliseconds(10));
  }
  // Grows whenever a worker read something or finished a client: what it
  // indexed since the last commit needs another commit to be seen.
  uint64_t progress() const { return progress_.load(std::memory_order_acquire); }
  // Waits for the next progress of any worker (at most 10 ms).
  void wait_for_progress() {
    std::unique_lock<std::mutex> lock(progress_mu_);
    progress_cv_.wait_for(lock, std::chrono::milliseconds(10));
  }
  // Ends the workers once every follower they hold has finished.
  void stop();

 private:
  struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<LogFollower*> incoming;  // under mu: added, not yet taken by the worker
    bool wake = false;                   // under mu
    std::thread thread;
  };
  void run(Worker& w);
  static void wake(Worker& w);

  std::chrono::milliseconds tick_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> progress_{0};
  std::mutex progress_mu_;
  std::condition_variable progress_cv_;
};

}  // namespace sonde::collect
