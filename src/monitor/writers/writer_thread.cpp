// The writer thread: it drains the threads' buffers into the writer core
// (full ones as they come, partly filled ones on every flush), answers
// flush, crash and stop requests, polls the samplers, culling and the
// pattern and probe files, and writes the monitor's health at close.
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "monitor/callsite_patch.hpp"
#include "monitor/controller.hpp"
#include "monitor/controller_state.hpp"
#include "monitor/diagnostic_records.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/process_info.hpp"
#include "monitor/samplers/record_builder.hpp"
#include "monitor/sampling.hpp"
#include "monitor/xray_mode.hpp"

namespace sonde::monitor::controller {

// The cause given to frames still open at close (interned at start).
uint32_t g_still_running_cause = 0;

// The names the log gave functions: culling names its candidates with
// them. Called with core_mu held.
FunctionNames names_in_log(State& s) {
  return [&s](uint64_t a) { return s.core->name_function(a); };
}

// After the log is closed nothing may be written to it: names it has only.
FunctionNames names_already_in_log(State& s) {
  return [&s](uint64_t a) { return s.core->function_name(a); };
}

namespace {

// Culling decides while the writer runs; not in the final drains at exit,
// where nothing would come of it (cull_print_summary reports instead).
bool decisions_allowed() { return g_mode.load(std::memory_order_relaxed) == kModeOn; }

void drain_full(State& s) {
  for (Buffer* b = s.full.take_all(); b != nullptr;) {
    Buffer* next = b->next;
    ThreadChannel* ch = b->channel;
    if (s.flight) {  // held in memory, written only by a snapshot
      s.flight->hold(s, b);
      ++ch->processed;
      s.recorded.fetch_add(b->used, std::memory_order_relaxed);
      if (s.writer_stalled.load(std::memory_order_relaxed)) s.writer_stalled.store(false);
      b = next;
      continue;
    }
    size_t from = ch->partial_buffer == b ? ch->partial_done : 0;
    cull_observe(*ch, b->events + from, b->events + b->used, s.core->functions_seen(),
                 names_in_log(s), decisions_allowed());
    s.core->consume(*ch, b->events + from, b->events + b->used);
    ch->partial_buffer = nullptr;
    ch->partial_done = 0;
    ++ch->processed;
    s.recorded.fetch_add(b->used, std::memory_order_relaxed);
    s.buffers_written.fetch_add(1, std::memory_order_relaxed);
    if (s.writer_stalled.load(std::memory_order_relaxed)) s.writer_stalled.store(false);
    if (b->final || !ch->returns.push(b)) {
      MonitorLock lock(s.channels_mu);
      s.recycled.push_back(b);
    }
    b = next;
  }
}

// Writes what live threads have put into their current buffers, so idle
// threads' events reach the log, and everything does before a crash.
void drain_partial(State& s) {
  if (s.flight) {  // nothing is written; the slow-trace trigger looks at them
    s.flight->scan_partial(s);
    return;
  }
  MonitorLock lock(s.channels_mu);
  for (ThreadChannel* ch : s.channels) {
    // Only when every earlier buffer is written and the snapshot is consistent.
    const auto [b, upto] = filled_part(*ch);
    if (b == nullptr) continue;
    size_t from = ch->partial_buffer == b ? ch->partial_done : 0;
    if (upto <= from) continue;
    cull_observe(*ch, b->events + from, b->events + upto, s.core->functions_seen(), names_in_log(s),
                 decisions_allowed());
    s.core->consume(*ch, b->events + from, b->events + upto);
    s.recorded.fetch_add(upto - from, std::memory_order_relaxed);
    ch->partial_buffer = b;
    ch->partial_done = upto;
  }
}

// Frees channels of exited threads whose buffers are all written.
void reap_channels(State& s) {
  MonitorLock lock(s.channels_mu);
  for (size_t i = 0; i < s.channels.size();) {
    ThreadChannel* ch = s.channels[i];
    if (ch->exited.load(std::memory_order_acquire) &&
        ch->handed_off.load(std::memory_order_acquire) == ch->processed &&
        !(s.flight && s.flight->holds(ch))) {
      while (Buffer* b = ch->returns.pop()) s.recycled.push_back(b);
      s.channels[i] = s.channels.back();
      s.channels.pop_back();
      delete ch;
    } else {
      ++i;
    }
  }
}

void report_thread_losses(State& s) {
  uint64_t lost = s.lost_unreported.exchange(0);
  if (lost != 0) s.core->report_loss(UINT32_MAX, lost, "dropped on exited threads");
}

// At close, frames still open (a server's event loop, a thread that never
// returns, exit() called from deep inside, a thread that returned or ended
// while the log was being closed, whose exits the probes no longer record)
// get failed exits whose cause says so, so every trace in the log is
// complete. The writer core closes them from the stream it wrote: a
// thread's own shadow stack may have moved on since the last drain.
void close_open_frames(State& s) { s.core->close_open_frames(g_still_running_cause, now_raw()); }

// The log ends with the monitor's health, so a reader can tell a trace cut
// by a longjmp from one the monitor broke. Called with core_mu held.
void write_health_record(State& s, const Health& h) {
  const format::RecordSchema* schema =
      format::find_builtin_schema("sonde.record.monitor.MonitorHealthRecord");
  // Only when something happened: a clean run's log stays exactly the
  // records the program produced (collectors and tests count them).
  if (schema == nullptr || h.unwound_frames + h.unmatched_exits + h.signal_lost +
                                   s.writer_stalls.load() + s.blocked_wait_ns.load() ==
                               0)
    return;
  static const std::string* host = nullptr;
  if (host == nullptr) host = new std::string(describe_process(s.config).hostname);
  samplers::RecordBuilder b(schema);
  b.set_int("timestamp", epoch_ns_now())
      .set_string("hostname", *host)
      .set_int("pid", getpid())
      .set_int("unwoundFrames", static_cast<int64_t>(h.unwound_frames))
      .set_int("unmatchedExits", static_cast<int64_t>(h.unmatched_exits))
      .set_int("signalLostEvents", static_cast<int64_t>(h.signal_lost))
      .set_int("writerStalls", static_cast<int64_t>(s.writer_stalls.load()))
      .set_int("blockedWaitNs", static_cast<int64_t>(s.blocked_wait_ns.load()));
  s.core->record(b.take());
}

// A thread ending while the log closes hands off its final buffer from its
// exit handler. drain_partial skips it once its state is gone, so when that
// hand-off lands after drain_full its events would never be written (seen
// under ASan: a worker that unwinds when monitoring stops lost its whole
// trace). The closing writer waits for such hand-offs, bounded; one that
// never arrives is reported as lost. Called with core_mu held.
bool ending_hand_off_pending(State& s, bool report) {
  MonitorLock lock(s.channels_mu);
  bool pending = false;
  for (ThreadChannel* ch : s.channels) {
    if (!ch->ending.load(std::memory_order_acquire)) continue;
    if (ch->exited.load(std::memory_order_acquire) &&
        ch->handed_off.load(std::memory_order_acquire) == ch->processed)
      continue;
    pending = true;
    if (report) {
      size_t done = ch->partial_buffer == ch->ending_buffer ? ch->partial_done : 0;
      if (ch->ending_used > done)
        s.core->report_loss(ch->index, ch->ending_used - done,
                            "thread ending at close: final buffer not received in time");
    }
  }
  return pending;
}

void drain_ending_threads(State& s) {
  constexpr int kSteps = 2000;  // 100 us each: 200 ms at most
  for (int i = 0; i < kSteps; ++i) {
    drain_full(s);
    if (!ending_hand_off_pending(s, /*report=*/false)) return;
    timespec nap{0, 100000};
    nanosleep(&nap, nullptr);
  }
  drain_full(s);
  ending_hand_off_pending(s, /*report=*/true);
}

}  // namespace

// Exited threads' counts plus the live threads' (read racily: a count a
// live thread adds while we read shows up in the next reading).
Health current_health(State& s) {
  Health h;
  h.unwound_frames = s.unwound_frames.load();
  h.unmatched_exits = s.unmatched_exits.load();
  h.signal_lost = s.signal_lost.load();
  MonitorLock lock(s.channels_mu);
  for (ThreadChannel* ch : s.channels) {
    if (ch->state == nullptr || ch->exited.load()) continue;
    h.unwound_frames += __atomic_load_n(&ch->state->unwound_frames, __ATOMIC_RELAXED);
    h.unmatched_exits += __atomic_load_n(&ch->state->unmatched_exits, __ATOMIC_RELAXED);
    h.signal_lost += __atomic_load_n(&ch->state->signal_lost_total, __ATOMIC_RELAXED);
  }
  return h;
}

void final_drain(State& s, bool closing) {
  MonitorLock lock(s.core_mu);
  if (!s.core || s.closed) return;
  drain_full(s);
  drain_partial(s);
  // (In synchronous mode a hand-off writes under core_mu itself: no wait.)
  if (closing && !s.config.synchronous) drain_ending_threads(s);
  report_thread_losses(s);
  drain_diagnostics(*s.core);
  if (closing) {
    // Events dropped on threads still running and not yet marked in a buffer.
    MonitorLock clock(s.channels_mu);
    for (ThreadChannel* ch : s.channels) {
      if (ch->state == nullptr || ch->exited.load()) continue;
      uint64_t pending = ch->state->pending_lost +
                         __atomic_exchange_n(&ch->state->signal_lost, 0, __ATOMIC_RELAXED);
      if (pending != 0) s.core->report_loss(ch->index, pending, "dropped, not yet marked at exit");
    }
  }
  if (closing) {
    // A snapshot asked for or triggered just before the end is still taken.
    if (s.flight) s.flight->serve(s);
    close_open_frames(s);
    write_health_record(s, current_health(s));
  }
  s.core->flush(true);
}

namespace {

// Called by the writer with core_mu held, after a flush: every address seen
// so far is resolved, so names of code about to be unmapped are safe, and
// an address reused by the next library must be resolved again.
void forget_unloaded_code(State& s) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  {
    MonitorLock lock(s.unload_mu);
    ranges.swap(s.unloaded_ranges);
  }
  for (const auto& [begin, end] : ranges) s.core->forget_functions(begin, end);
}

// The longest idle sleep: bounds how late a pattern-file change or a
// diagnostic record is noticed. Work that cannot wait rings the doorbell.
constexpr int64_t kIdleSleepMaxNs = 10000000;

bool writer_has_work(State& s) {
  return !s.full.empty() || s.stop.load(std::memory_order_seq_cst) ||
         s.stop_signal.load(std::memory_order_seq_cst) != 0 ||
         s.crash_request.load(std::memory_order_seq_cst) ||
         s.flush_requested.load(std::memory_order_seq_cst) !=
             s.flush_done.load(std::memory_order_relaxed);
}

// Sleeps until rung or the next deadline (`until_deadline_ms` from now).
void idle_sleep(State& s, int64_t until_deadline_ms) {
  if (until_deadline_ms <= 0) return;
  const int64_t sleep_ns = std::min(kIdleSleepMaxNs, until_deadline_ms * 1000000);
  const uint32_t ticket = s.doorbell.arm();
  if (writer_has_work(s)) {
    s.doorbell.disarm();
    return;
  }
  s.doorbell.sleep(ticket, static_cast<uint64_t>(sleep_ns));
}

}  // namespace

void writer_loop() {
  State& s = state();
  // Before anything takes a lock: it calls dlsym (culling's leaves).
  prepare_code_classification();
  s.writer_tid = static_cast<pid_t>(syscall(SYS_gettid));
  t_starting = true;            // never waits for start() (ensure_started)
  t_state.status = kThreadOff;  // the writer never records itself
  t_probe_busy = 1;             // nor do the interposition probes (its own locks)
  pthread_setname_np(pthread_self(), "sonde-writer");
  // Asynchronous signals are blocked from this thread's birth (start_writer).
  auto now_ms = [] { return monotonic_ns_now() / 1000000; };
  int64_t next_flush = now_ms() + s.config.flush_interval_ms;
  int64_t next_clock = now_ms() + 100;
  int64_t clock_period = 100;
  Sampling sampling(s.config, [&](const format::Record& r) { s.core->record(r); });
  // Fault injection for the tests of the block policy's bound
  // (docs/configuration.md): the writer stalls as a hung disk would make it.
  if (uint32_t stall = s.config.fault_writer_stall_ms; stall != 0) {
    timespec nap{static_cast<time_t>(stall / 1000), static_cast<long>(stall % 1000) * 1000000};
    nanosleep(&nap, nullptr);
  }
  bool fresh = false;  // culling observes: partial buffers too, every ms
  while (!s.stop.load(std::memory_order_acquire)) {
    if (s.stop_signal.load(std::memory_order_acquire) != 0) {
      close_for_stop_signal(s);
      break;
    }
    bool idle = s.full.empty();
    {
      MonitorLock lock(s.core_mu);
      drain_full(s);
      drain_diagnostics(*s.core);
      int64_t t = now_ms();
      if (s.crash_request.load(std::memory_order_acquire)) {
        drain_full(s);  // buffers pushed since this iteration's first drain
        drain_partial(s);
        if (s.flight) s.flight->snapshot_now(s, "fatal signal");
        report_thread_losses(s);
        drain_diagnostics(*s.core);
        s.core->flush(true);
        s.crash_done.store(true, std::memory_order_release);
        s.crash_request.store(false);
      }
      const uint64_t requested = s.flush_requested.load(std::memory_order_acquire);
      if (requested != s.flush_done.load(std::memory_order_relaxed) || t >= next_flush) {
        drain_full(s);
        drain_partial(s);
        report_thread_losses(s);
        s.core->flush(true);
        forget_unloaded_code(s);
        next_flush = t + s.config.flush_interval_ms;
        s.flush_done.store(requested, std::memory_order_release);
      }
      if (t >= next_clock) {
        s.core->refresh_clock();
        // Pairs further apart give a better tick estimate; 1 s is plenty.
        clock_period = std::min<int64_t>(clock_period * 2, 1000);
        next_clock = t + clock_period;
      }
      sampling.poll(t);
      cull_poll(t, names_in_log(s));
      fresh = cull_wants_fresh_events(t);
      if (fresh) drain_partial(s);
      if (s.flight) {
        // The slow-trace trigger looks at the threads' newest events on
        // every round (at most kIdleSleepMaxNs apart), not only at flushes:
        // a slow request should be kept while it is still in the rings.
        s.flight->scan_partial(s);
        s.flight->serve(s);
        s.flight->expire_exited(s, now_raw(), s.core->calibration().ns_per_tick());
      }
      reap_channels(s);
    }
    // Outside core_mu: mprotect and code stores need no lock of the
    // writer's, and synchronous probes wait on core_mu.
    apply_callsite_patches();
    poll_patterns_file();
    poll_probes_file();
    if (idle) {
      const int64_t now = now_ms();
      idle_sleep(s, std::min({next_flush, next_clock, sampling.next_due_ms(),
                              fresh ? now + 1 : next_flush}) -
                        now);
    }
  }
  // For the summary: whether the writer keeps up shows in its CPU per event.
  timespec cpu{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  s.writer_cpu_ns = int64_t{cpu.tv_sec} * 1000000000 + cpu.tv_nsec;
}

}  // namespace sonde::monitor::controller
