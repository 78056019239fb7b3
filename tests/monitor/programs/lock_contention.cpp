// Lock contention with an exact, known number of contended acquisitions:
//   test_lock_contention PAIRS ROUNDS [reload]
// Each pair is a holder and a waiter thread on the pair's own mutex. Per
// round the holder locks the mutex, lets the waiter go, and unlocks only
// once the waiter is blocked inside pthread_mutex_lock (glibc marks a
// mutex with sleeping waiters by __lock == 2), so every waiter acquisition
// is contended: PAIRS * ROUNDS contended waits, each inside the operation
// "locks.wait". Every thread also takes a private mutex ROUNDS times,
// never contended. "reload": the rounds run twice, first with the probes
// file (SONDE_PROBES_FILE) absent, then after writing probe_lock_wait = on
// into it and waiting until libsonde has applied it; only the second half
// may record waits. Prints "mutex <pair> <address>" per pair to stderr.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sonde/records.h"
#include "sonde/sonde.hpp"

namespace {

struct Pair {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<int> held_round{-1};  // holder: locked for this round
  std::atomic<int> done_round{-1};  // waiter: acquired and released this round
};

void private_locks(int rounds) {
  pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < rounds; ++i) {
    SONDE_SCOPE_NAMED("locks.private");
    pthread_mutex_lock(&own);
    pthread_mutex_unlock(&own);
  }
}

void holder(Pair& p, int first, int rounds) {
  for (int r = first; r < first + rounds; ++r) {
    {
      SONDE_SCOPE_NAMED("locks.hold");
      pthread_mutex_lock(&p.mutex);
      p.held_round.store(r);
      // Until the waiter sleeps in the kernel on this mutex.
      while (__atomic_load_n(&p.mutex.__data.__lock, __ATOMIC_ACQUIRE) != 2) sched_yield();
      pthread_mutex_unlock(&p.mutex);
    }
    while (p.done_round.load() != r) sched_yield();
  }
  private_locks(rounds);
}

void waiter(Pair& p, int first, int rounds) {
  for (int r = first; r < first + rounds; ++r) {
    while (p.held_round.load() != r) sched_yield();
    {
      SONDE_SCOPE_NAMED("locks.wait");
      pthread_mutex_lock(&p.mutex);
      pthread_mutex_unlock(&p.mutex);
    }
    p.done_round.store(r);
  }
  private_locks(rounds);
}

void run_rounds(std::vector<Pair>& pairs, int first, int rounds) {
  std::vector<std::thread> threads;
  for (Pair& p : pairs) {
    threads.emplace_back(holder, std::ref(p), first, rounds);
    threads.emplace_back(waiter, std::ref(p), first, rounds);
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: test_lock_contention PAIRS ROUNDS [reload]\n");
    return 2;
  }
  int pairs_n = std::atoi(argv[1]);
  int rounds = std::atoi(argv[2]);
  bool reload = argc > 3 && std::string(argv[3]) == "reload";
  std::vector<Pair> pairs(static_cast<size_t>(pairs_n));
  for (int i = 0; i < pairs_n; ++i) {
    std::fprintf(stderr, "mutex %d %p\n", i,
                 static_cast<void*>(&pairs[static_cast<size_t>(i)].mutex));
  }
  if (!reload) {
    run_rounds(pairs, 0, rounds);
    return 0;
  }
  const char* file = std::getenv("SONDE_PROBES_FILE");
  if (file == nullptr) {
    std::fprintf(stderr, "reload needs SONDE_PROBES_FILE\n");
    return 2;
  }
  if (sonde_probe_enabled("lock_wait") != 0) {
    std::fprintf(stderr, "lock_wait probe on before the probes file enabled it\n");
    return 3;
  }
  run_rounds(pairs, 0, rounds);
  std::ofstream(file) << "# written by test_lock_contention\nprobe_lock_wait = on\n";
  // Bounded: the writer thread re-reads the file every patterns_reload_ms.
  for (int i = 0; i < 10000 && sonde_probe_enabled("lock_wait") != 1; ++i) {
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
  }
  if (sonde_probe_enabled("lock_wait") != 1) {
    std::fprintf(stderr, "the probes file was not applied within 10 s\n");
    return 4;
  }
  run_rounds(pairs, rounds, rounds);
  return 0;
}
