// fork(): every libsonde lock is held across it; the child either writes
// its own log (restarted by its first probe) or stops monitoring.
#include <unistd.h>

#include <new>
#include <thread>
#include <vector>

#include "monitor/controller_state.hpp"
#include "monitor/diagnostic_records.hpp"
#include "monitor/registry.hpp"

namespace sonde::monitor::controller {
namespace {

// Every libsonde lock an application thread can hold is held across fork,
// so the child never inherits one locked by a thread that does not exist
// there. Taken in the order used everywhere else, or fork deadlocks against
// the writer: restart_mu, core_mu, channels_mu, the registry (the writer
// looks names up under core_mu and channels_mu), patterns_mu (registration
// asks the patterns under the registry's lock), unload_mu.
void lock_all_for_fork(State& s) {
  s.restart_mu.lock();
  s.core_mu.lock();
  s.channels_mu.lock();
  lock_registry_for_fork();
  s.patterns_mu.lock();
  s.unload_mu.lock();
}

void unlock_all_after_fork(State& s) {
  s.unload_mu.unlock();
  s.patterns_mu.unlock();
  unlock_registry_after_fork();
  s.channels_mu.unlock();
  s.core_mu.unlock();
  s.restart_mu.unlock();
}

}  // namespace

void on_fork_prepare() { lock_all_for_fork(state()); }

void on_fork_parent() { unlock_all_after_fork(state()); }

void on_fork_child() {
  State& s = state();
  unlock_all_after_fork(s);
  ThreadState& t = t_state;
  // The parent writes everything it recorded; the child forgets it. The
  // forgotten objects stay reachable from here: freeing them could touch
  // state a vanished thread was using, and leak checkers would flag them.
  static std::vector<void*>* abandoned = new std::vector<void*>;
  for (Buffer* b = s.full.take_all(); b != nullptr; b = b->next) abandoned->push_back(b);
  for (ThreadChannel* ch : s.channels) abandoned->push_back(ch);
  new (&s.full) FullStack();
  s.channels.clear();
  // The parent's writer thread does not exist here; its std::thread object
  // is still "joinable", and destroying or assigning it would terminate.
  new (&s.writer) std::thread();
  // Nothing complex runs inside an atfork handler (no destructors, no
  // thread creation: allocator locks may still be held by vanished
  // threads). The child restarts monitoring on its first probe instead.
  abandoned->push_back(s.core.release());
  // The parent's held rings are the parent's; the child starts its own.
  abandoned->push_back(s.flight.release());
  diagnostics_after_fork_child();
  s.stop.store(false);
  s.stop_signal.store(0);  // a close the parent was making is the parent's
  s.stop_signal_done.store(false);
  s.closed = false;
  s.recorded.store(0);
  s.buffers_written.store(0);
  if (s.config.fork == ForkPolicy::kStop) {
    set_mode(kModeOff);
    t.status = kThreadOff;
    return;
  }
  // Keep this thread's shadow stack (its frames still return), but give it
  // a fresh channel and buffer later, and a trace whose parent is where the
  // fork happened.
  if (t.depth > 0) {
    t.has_parent = 1;
    t.parent_trace_id = t.trace_id - 1;
    t.parent_order_id = static_cast<int32_t>(t.order) - 1;
    // A W3C trace sonde did not start goes on in the child under its id.
    t.parent_is_w3c = (t.w3c_high | t.w3c_low) != 0;
    t.parent_w3c_high = t.w3c_high;
    t.parent_w3c_low = t.w3c_low;
    t.parent_span_id = 0;
    t.resume_after_fork = 1;
  }
  t.channel = nullptr;
  t.status = kThreadNew;
  set_no_buffer(t);
  t.trace_id = 0;  // fresh id block: the parent keeps using its own
  s.trace_base ^= (static_cast<uint64_t>(getpid()) << 40) & 0x7fffff0000000000ULL;
  s.next_thread_index = 0;
  s.restart_after_fork.store(true, std::memory_order_release);
  set_mode(kModeUnstarted);
}

}  // namespace sonde::monitor::controller
