#include "collect/analysis_pool.hpp"

#include <algorithm>

namespace sonde::collect {

// Read per step of one follower: large enough that a busy client is read
// in few system calls, small enough that the worker's other clients wait
// little (about a millisecond of reconstruction at a few MB/s of log).
constexpr size_t kStepBytes = 256u << 10;
// Closed clients a worker analyses at once. One that waits its turn holds
// no reconstruction, decoder or open file, only its log on disk: when the
// workers fall behind a stream of short-lived processes, thousands of
// closed clients wait, and each analysed at once held about 1.8 MB (a
// 10-minute soak reached 4.9 GB when all of them were read in turn,
// 2026-12-03). Open clients are always read (--max-clients bounds them),
// so that their traces stay live.
constexpr size_t kClosedAtOnce = 2;

AnalysisPool::AnalysisPool(size_t workers, std::chrono::milliseconds tick) : tick_(tick) {
  workers_.resize(std::max<size_t>(1, workers));
  for (auto& w : workers_) w = std::make_unique<Worker>();
  for (auto& w : workers_) w->thread = std::thread([this, &w = *w] { run(w); });
}

AnalysisPool::~AnalysisPool() {
  stop();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void AnalysisPool::add(LogFollower& follower, uint64_t client) {
  Worker& w = *workers_[client % workers_.size()];
  {
    std::lock_guard<std::mutex> lock(w.mu);
    w.incoming.push_back(&follower);
  }
  wake(w);
}

void AnalysisPool::wake(Worker& w) {
  {
    std::lock_guard<std::mutex> lock(w.mu);
    w.wake = true;
  }
  w.cv.notify_one();
}

void AnalysisPool::stop() {
  stopping_.store(true, std::memory_order_release);
  for (auto& w : workers_) wake(*w);
}

void AnalysisPool::run(Worker& w) {
  auto last_tick = std::chrono::steady_clock::now();
  std::string scratch;  // the read buffer, shared by this worker's followers
  // The worker's own lists, so that a round costs what is being read, not
  // what waits: open clients (read every round, for live traces), closed
  // ones being read (those that began while open, and up to kClosedAtOnce
  // more), and closed ones waiting their turn without state, in order.
  std::vector<LogFollower*> open, closing;
  std::deque<LogFollower*> waiting;
  std::vector<LogFollower*> finished;
  // One step; a finished follower goes to `finished` and leaves its list.
  bool progressed = false;
  const auto step = [&](LogFollower* f) {
    switch (f->step(kStepBytes, scratch)) {
      case LogFollower::Step::kProgress:
        progressed = true;
        return false;
      case LogFollower::Step::kFinished:
        finished.push_back(f);
        return true;
      case LogFollower::Step::kIdle:
        return false;
    }
    return false;
  };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(w.mu);
      open.insert(open.end(), w.incoming.begin(), w.incoming.end());
      w.incoming.clear();
      w.wake = false;
    }
    progressed = false;
    finished.clear();
    // One step per follower per round: a busy client does not starve the
    // worker's others.
    std::erase_if(open, [&](LogFollower* f) {
      if (!f->ended()) return step(f);  // it may end meanwhile and finish
      if (f->started()) {
        closing.push_back(f);
      } else {
        waiting.push_back(f);
      }
      return true;
    });
    while (closing.size() < kClosedAtOnce && !waiting.empty()) {
      closing.push_back(waiting.front());
      waiting.pop_front();
    }
    std::erase_if(closing, step);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_tick >= tick_) {
      for (LogFollower* f : open) f->tick();
      for (LogFollower* f : closing) f->tick();
      last_tick = now;
    }
    // Out of every list first: the collector may destroy them now.
    for (LogFollower* f : finished) f->set_done();
    if (progressed || !finished.empty()) {
      progress_.fetch_add(1, std::memory_order_release);
      { std::lock_guard<std::mutex> lock(progress_mu_); }
      progress_cv_.notify_all();
      continue;  // closed clients may be waiting for the slots just freed
    }
    std::unique_lock<std::mutex> lock(w.mu);
    if (stopping_.load(std::memory_order_acquire) && w.incoming.empty() && open.empty() &&
        closing.empty() && waiting.empty()) {
      return;
    }
    w.cv.wait_for(lock, tick_, [&] { return w.wake; });
  }
}

}  // namespace sonde::collect
