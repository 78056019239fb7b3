// Marks code that the interposition probes must not record: the writer
// thread for its whole life, a probe while it records, and libsonde's own
// locks on the program's threads (their waits are the monitor's cost, not
// the program's). The caller-address test in the lock probe cannot see
// these when another interposer (ThreadSanitizer's pthread_mutex_lock)
// sits between libsonde and the lock, so libsonde says so itself.
#pragma once

#include <cstdint>
#include <mutex>

#include "monitor/preload_abi.hpp"  // t_probe_busy, shared with the preload library

namespace sonde::monitor {

// Nests: restores what it found, so a scope inside the writer thread (busy
// for life) or inside another busy scope leaves the flag as it was.
class ProbeBusy {
 public:
  ProbeBusy() : previous_(t_probe_busy) { t_probe_busy = 1; }
  ~ProbeBusy() { t_probe_busy = previous_; }
  ProbeBusy(const ProbeBusy&) = delete;
  ProbeBusy& operator=(const ProbeBusy&) = delete;

 private:
  uint8_t previous_;
};

// std::lock_guard for libsonde's own mutexes: the lock probe passes them
// straight through, contended or not.
class MonitorLock {
 public:
  explicit MonitorLock(std::mutex& m) : lock_(m) {}

 private:
  ProbeBusy busy_;  // declared first: set before locking, cleared after unlocking
  std::lock_guard<std::mutex> lock_;
};

}  // namespace sonde::monitor
