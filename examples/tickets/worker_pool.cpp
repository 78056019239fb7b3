// The fixed pool of worker threads that run the handlers.
#include <exception>
#include <iostream>

#include "tickets.hpp"

namespace tickets {

WorkerPool::WorkerPool(int workers, Run run) : run_(std::move(run)) {
  try {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    stop_and_join();  // the threads already started, before the error goes on
    throw;
  }
}

WorkerPool::~WorkerPool() { stop_and_join(); }

void WorkerPool::stop_and_join() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void WorkerPool::submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

// Jobs queued before the stop still run (their answers are dropped with
// their connections): no handler is cut off inside a transaction.
void WorkerPool::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      run_(job);
    } catch (const std::exception& e) {
      // Only an allocation can fail here (handle_request answers 500 to
      // everything else); the client waits in vain, the server goes on.
      std::cerr << "tickets: a worker could not answer: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "tickets: a worker could not answer\n";
    }
  }
}

}  // namespace tickets
