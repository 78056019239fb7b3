// Start and shutdown: the first probe starts monitoring (configuration,
// patterns, the log, the writer thread, the signal and fork handlers);
// exit, a stop signal or the API close the log and print the summary.
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "monitor/callsite_patch.hpp"
#include "monitor/controller.hpp"
#include "monitor/controller_state.hpp"
#include "monitor/diagnostic_records.hpp"
#include "monitor/function_filter.hpp"
#include "monitor/patterns.hpp"
#include "monitor/process_info.hpp"
#include "monitor/registry.hpp"
#include "monitor/writers/writer_factories.hpp"
#include "monitor/xray_mode.hpp"

namespace sonde::monitor {

// Set while this thread runs start(), and for good on the writer thread.
// Starting calls libstdc++ (strings, streams), and a program whose
// instrumented template instances interpose libstdc++'s own (an exported
// std::string::_M_create, called back from libstdc++'s stringbuf) reached a
// hook from inside start(): call_once re-entered on the same thread and the
// program hung before main. Such a probe now finds monitoring not started
// and records nothing. The writer, which may reach such code while start()
// still runs, must not wait for it either.
__thread bool t_starting __attribute__((tls_model("initial-exec"))) = false;

namespace controller {

void drain_and_close_log(State& s) {
  final_drain(s, /*closing=*/true);
  MonitorLock lock(s.core_mu);
  if (s.core && !s.closed) {
    s.core->close();
    s.closed = true;
    print_summary(s);
    cull_print_summary(names_already_in_log(s));
  }
}

// Called with core_mu held.
void print_summary(State& s) {
  if (!s.config.summary || !s.core) return;
  Totals t;
  t.written = s.core->events_written();
  t.dropped = s.core->events_lost();
  if (s.flight) {
    // Events that left the rings were never meant to be written: the line
    // says how many were recorded and how many the snapshots kept.
    const flight::FlightStats& f = s.flight->stats();
    std::fprintf(
        stderr,
        "sonde: flight recorder: %llu events recorded, %llu lost; %llu snapshot(s) with "
        "%llu events%s%s; %llu failed, %llu triggers suppressed (flight_min_interval_ms), "
        "%llu requests over flight_max_snapshots, %llu traces cut off at a window's "
        "start (%llu calls inside them kept as traces of their own)\n",
        static_cast<unsigned long long>(s.recorded.load()),
        static_cast<unsigned long long>(t.dropped), static_cast<unsigned long long>(f.snapshots),
        static_cast<unsigned long long>(f.events_written),
        f.last_path.empty() ? "" : ", last: ", f.last_path.c_str(),
        static_cast<unsigned long long>(f.failed), static_cast<unsigned long long>(f.suppressed),
        static_cast<unsigned long long>(f.over_limit),
        static_cast<unsigned long long>(f.traces_cut_off),
        static_cast<unsigned long long>(f.calls_salvaged));
    if (s.flight->context_trigger_active()) {
      const flight::ContextTriggerStats& c = s.flight->context_stats();
      std::fprintf(stderr,
                   "sonde: flight recorder: context trigger: %llu traces scored, %llu above "
                   "flight_context_score; not scored: %llu with a context the model never saw, "
                   "%llu too large, %llu that lost events\n",
                   static_cast<unsigned long long>(c.scored),
                   static_cast<unsigned long long>(c.anomalies),
                   static_cast<unsigned long long>(c.unknown),
                   static_cast<unsigned long long>(c.too_large),
                   static_cast<unsigned long long>(c.damaged));
    }
  } else {
    std::fprintf(stderr, "sonde: %llu events written, %llu lost, log: %s\n",
                 static_cast<unsigned long long>(t.written),
                 static_cast<unsigned long long>(t.dropped), s.core->writer().location().c_str());
  }
  if (s.writer_cpu_ns > 0) {
    // The flight recorder's writer reads every recorded event (triggers) and
    // writes few: its cost is per event recorded, not per event written.
    const uint64_t events = s.flight ? s.recorded.load() : t.written;
    std::fprintf(stderr, "sonde: writer thread: %.1f ms CPU, %.2f ns per event %s\n",
                 static_cast<double>(s.writer_cpu_ns) / 1e6,
                 events == 0 ? 0.0
                             : static_cast<double>(s.writer_cpu_ns) / static_cast<double>(events),
                 s.flight ? "recorded" : "written");
  }
  if (uint64_t d = diagnostics_emitted() + diagnostics_dropped(); d != 0) {
    std::fprintf(stderr,
                 "sonde: %llu probe records (lock waits, database calls, messages), %llu dropped\n",
                 static_cast<unsigned long long>(diagnostics_emitted()),
                 static_cast<unsigned long long>(diagnostics_dropped()));
  }
  if (t.dropped != 0) {
    std::fprintf(stderr, "sonde: WARNING: %llu events were lost (policy %s%s)\n",
                 static_cast<unsigned long long>(t.dropped),
                 s.config.policy == FullPolicy::kBlock ? "block" : "drop",
                 s.core->writer().failed() ? ", write error" : "");
  }
  const Health h = current_health(s);
  if (h.unwound_frames + h.unmatched_exits + h.signal_lost != 0) {
    std::fprintf(stderr,
                 "sonde: %llu frames left without their exit (longjmp, missing end) closed as "
                 "unwound, %llu exits without an enter ignored, %llu events of probes in signal "
                 "handlers that interrupted a probe counted as lost\n",
                 static_cast<unsigned long long>(h.unwound_frames),
                 static_cast<unsigned long long>(h.unmatched_exits),
                 static_cast<unsigned long long>(h.signal_lost));
  }
  if (uint64_t stalls = s.writer_stalls.load(); stalls != 0 || s.blocked_wait_ns.load() != 0) {
    std::fprintf(stderr,
                 "sonde: writer health: probes waited %.1f ms in all for free buffers; %llu "
                 "stall(s) longer than block_timeout_ms (%u ms)\n",
                 static_cast<double>(s.blocked_wait_ns.load()) / 1e6,
                 static_cast<unsigned long long>(stalls), s.config.block_timeout_ms);
  }
  // Functions excluded by patterns have their hook calls patched too;
  // culling's summary has this line already.
  if (!s.config.cull && callsite_patch_stats().requested != 0) {
    std::fprintf(stderr, "sonde: excluded functions' %s\n", callsite_patch_summary().c_str());
  }
}

namespace {

std::once_flag g_start_once;

void start_writer(State& s) {
  ProcessInfo info = describe_process(s.config);
  // Flight recorder: the core only counts (null writer); snapshots are
  // logs of their own.
  s.core = std::make_unique<WriterCore>(
      s.config, s.config.flight ? make_null_writer() : make_event_writer(s.config), info);
  if (s.config.flight) {
    s.flight = std::make_unique<flight::FlightRecorder>(s.config);
    // A model that cannot be used is a bad configuration: monitoring stays
    // off rather than recording without the trigger the user asked for.
    if (std::string err = s.flight->load_context_model(); !err.empty()) {
      std::fprintf(stderr, "sonde: monitoring disabled: %s\n", err.c_str());
      s.flight.reset();
      s.core.reset();
      set_mode(kModeOff);
      return;
    }
  }
  if (std::string err = s.core->open(); !err.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", err.c_str());
    s.core.reset();
    set_mode(kModeOff);
    return;
  }
  // Set here, not on the writer thread: a child that ends right after its
  // first probe may call _exit before the new thread has run at all.
  s.writer_pid = static_cast<pid_t>(syscall(SYS_getpid));
  // Asynchronous signals go to the program's threads, never to this one:
  // a stop signal's handler waits for this thread to close the log, and the
  // program's own handlers expect to run on the program's threads (and
  // their probes to be recorded). The thread inherits the mask, so it is
  // blocked from birth: set on the thread itself, it left a window in the
  // thread's start-up (glibc's, and ASan's, which calls pthread_getattr_np
  // and calloc) where an instrumented handler ran on it, and its probe's
  // own pthread_getattr_np deadlocked on the lock the interrupted call held
  // (seen under ASan, test_signal_probes, 1 run in 2). Faults in the
  // writer stay deliverable.
  sigset_t blocked, previous;
  sigfillset(&blocked);
  for (int sig : kFatalSignals) sigdelset(&blocked, sig);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  try {
    s.writer = std::thread(writer_loop);
  } catch (const std::exception& e) {  // out of threads or memory: the program goes on
    std::fprintf(stderr, "sonde: monitoring disabled: cannot start the writer thread: %s\n",
                 e.what());
    s.core.reset();
    set_mode(kModeOff);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void at_exit_handler() { shutdown_monitoring(); }

void start() {
  State& s = state();
  pthread_key_create(&g_thread_key, thread_exit);
  std::string err = load_config(s.config);
  if (!err.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", err.c_str());
    return;
  }
  if (!s.config.enabled) return;
  std::string patterns = s.config.patterns;
  if (!s.config.patterns_file.empty()) {
    std::ifstream in(s.config.patterns_file);
    if (!in) {
      std::fprintf(stderr, "sonde: monitoring disabled: cannot read patterns_file %s\n",
                   s.config.patterns_file.c_str());
      return;
    }
    std::string file_text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    note_patterns_file_text(file_text);
    patterns += "\n" + file_text;
  }
  if (std::string perr = set_patterns(patterns, /*before_recording=*/true); !perr.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", perr.c_str());
    return;
  }
  if (std::string derr = start_diagnostics(s.config); !derr.empty()) {
    std::fprintf(stderr, "sonde: monitoring disabled: %s\n", derr.c_str());
    return;
  }
  select_timer(s.config.timer != TimerChoice::kMonotonic);
  if (s.config.timer == TimerChoice::kTsc && g_timer != TimerKind::kTsc) {
    std::fprintf(
        stderr, "sonde: timer=tsc requested but the TSC is not invariant; using clock_monotonic\n");
  }
  // Trace ids: a random high half per process, blocks of the low half per thread.
  uint64_t seed = static_cast<uint64_t>(epoch_ns_now()) ^ (static_cast<uint64_t>(getpid()) << 20);
  seed ^= seed >> 33;
  seed *= 0xff51afd7ed558ccdULL;
  seed ^= seed >> 33;
  s.trace_base = (seed & 0x7fffffff00000000ULL) | 0x100000000ULL;
  s.next_trace_block.store(kTraceBlock);  // ids with low bits 0 would look unset
  set_unwound_cause(intern_cause("left without returning (longjmp, or its exit was not seen)"));
  g_still_running_cause = intern_cause("still running when the log was closed");
  load_trace_start(s.config.trace_start);
  start_writer(s);
  if (!s.core) return;
  install_crash_handlers();
  if (s.config.stop_signals) install_stop_handlers();
  if (s.config.flight) install_flight_signal(s.config);
  pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
  std::atexit(at_exit_handler);
  set_mode(kModeOn);
  if (s.config.xray) xray_start();
}

}  // namespace
}  // namespace controller

using namespace controller;

const Config& current_config() { return state().config; }

void ensure_started() {
  if (t_starting) return;
  std::call_once(g_start_once, [] {
    t_starting = true;
    start();
    t_starting = false;
    if (g_mode.load() == kModeUnstarted) set_mode(kModeOff);  // start() failed or disabled
  });
  State& s = state();
  if (s.restart_after_fork.load(std::memory_order_acquire)) [[unlikely]] {
    // First probe in a forked child: open the child's own log.
    MonitorLock lock(s.restart_mu);
    if (s.restart_after_fork.load()) {
      s.restart_after_fork.store(false);
      start_writer(s);
      set_mode(s.core ? kModeOn : kModeOff);
    }
  }
}

void shutdown_monitoring() {
  State& s = state();
  uint8_t expected = g_mode.load();
  if (expected == kModeShutdown) return;
  set_mode(kModeShutdown);
  // Hand off this thread's buffer so its events are written in order.
  ThreadState& t = t_state;
  if ((t.status == kThreadActive || t.status == kThreadResync) && t.buffer != nullptr) {
    t.status = kThreadInProbe;
    hand_off(t, /*final=*/false);
    t.status = kThreadActive;
  }
  if (s.writer.joinable()) {
    s.stop.store(true, std::memory_order_release);
    s.doorbell.ring();
    s.writer.join();
  }
  drain_and_close_log(s);
}

bool flush_now() {
  State& s = state();
  if (g_mode.load() != kModeOn) return false;
  ThreadState& t = t_state;
  if ((t.status == kThreadActive || t.status == kThreadResync) && t.buffer != nullptr) {
    t.status = kThreadInProbe;  // a signal handler's probe must not take the buffer meanwhile
    hand_off(t, false);
    next_buffer(t);
    t.status = kThreadActive;
  }
  // The writer thread cannot wait for itself (a dlclose inside elfutils).
  if (static_cast<pid_t>(syscall(SYS_gettid)) == s.writer_tid) return false;
  const uint64_t ticket = s.flush_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  s.doorbell.ring();
  for (int i = 0; i < 5000 && s.flush_done.load(std::memory_order_acquire) < ticket; ++i) {
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
  }
  return s.flush_done.load(std::memory_order_acquire) >= ticket;
}

bool before_code_unload(uint64_t begin, uint64_t end) {
  State& s = state();
  if (g_mode.load() != kModeOn) return false;
  {
    MonitorLock lock(s.unload_mu);
    s.unloaded_ranges.emplace_back(begin, end);
  }
  return flush_now();
}

Totals current_totals() {
  State& s = state();
  Totals t;
  t.recorded = s.recorded.load();
  t.buffers = s.buffers_written.load();
  MonitorLock lock(s.core_mu);
  if (s.core) {
    t.written = s.core->events_written();
    t.dropped = s.core->events_lost();
    t.write_errors = s.core->writer().failed() ? 1 : 0;
  }
  return t;
}

}  // namespace sonde::monitor
