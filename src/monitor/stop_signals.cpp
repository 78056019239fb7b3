// Fatal signals (SIGSEGV, SIGABRT, ...): the writer writes everything, then
// the signal takes its course. Stop signals (SIGTERM, SIGINT, SIGHUP) left
// at their default and _exit: the writer closes the log first.
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

#include "monitor/controller.hpp"
#include "monitor/controller_state.hpp"

namespace sonde::monitor {
namespace controller {

// Fatal signals: ask the writer to write everything, wait (bounded), re-raise.

namespace {

struct sigaction g_previous[32];

void crash_handler(int sig, siginfo_t* info, void* context) {
  State& s = state();
  set_mode(kModeShutdown);
  if (static_cast<pid_t>(syscall(SYS_gettid)) != s.writer_tid && s.writer.joinable()) {
    // This thread's current buffer is published through cur; the writer
    // reads it in drain_partial. Only async-signal-safe calls from here on.
    s.crash_request.store(true, std::memory_order_release);
    s.doorbell.ring();
    timespec nap{0, 1000000};
    for (uint32_t waited = 0; waited < s.config.crash_flush_timeout_ms; ++waited) {
      if (s.crash_done.load(std::memory_order_acquire)) break;
      nanosleep(&nap, nullptr);
    }
  }
  // Restore the previous disposition and re-raise, so the program dies as
  // it would have (core dump, exit status) or its own handler runs.
  struct sigaction& prev = g_previous[sig];
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  sigaction(sig, &prev, nullptr);
  raise(sig);
}

// ---------------------------------------------------------------------------
// Stop signals (SIGTERM, SIGINT, SIGHUP) whose disposition is the default:
// the process would die without running atexit, so the log would lack its
// END item. The handler asks the writer to write everything and close the
// log (only async-signal-safe calls here), waits for it (bounded), then
// lets the signal take its default effect. A program that installs its own
// handler replaces this one, and its handler's exit() closes the log.

// Asks the writer to write everything and close the log, and waits for it
// (bounded by crash_flush_timeout_ms). Async-signal-safe. `reason`: the
// stop signal, or kImmediateExit.
constexpr int kImmediateExit = -1;

void close_from_any_context(State& s, int reason) {
  const bool on_writer = static_cast<pid_t>(syscall(SYS_gettid)) == s.writer_tid;
  if (on_writer || !s.writer.joinable()) return;
  // A second caller (another thread's _exit, a stop signal during one)
  // waits for the same close: returning at once would let its _exit end
  // the process while the writer is still writing.
  int expected = 0;
  if (s.stop_signal.compare_exchange_strong(expected, reason)) s.doorbell.ring();
  timespec nap{0, 1000000};
  for (uint32_t waited = 0; waited < s.config.crash_flush_timeout_ms; ++waited) {
    if (s.stop_signal_done.load(std::memory_order_acquire)) return;
    nanosleep(&nap, nullptr);
  }
  if (s.stop_signal_done.load(std::memory_order_acquire)) return;
  // Said, not left to the log reader alone (write(2): async-signal-safe).
  static const char kMsg[] =
      "sonde: the log was not closed within crash_flush_timeout_ms; it may be incomplete\n";
  ssize_t ignored = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  (void)ignored;
}

void stop_signal_handler(int sig) {
  close_from_any_context(state(), sig);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered when this handler returns (the signal is blocked in it)
}

}  // namespace

}  // namespace controller

using namespace controller;

// _exit/_Exit skip atexit, so a forked server's child that ends with them
// left its last buffers unwritten and its log without END. Only the process
// whose writer thread this is: a vfork child shares the parent's memory
// (and its writer), and must not close the parent's log.
void close_before_immediate_exit() {
  State& s = state();
  if (static_cast<pid_t>(syscall(SYS_getpid)) != s.writer_pid.load(std::memory_order_acquire))
    return;
  close_from_any_context(s, kImmediateExit);
}

namespace controller {

void install_stop_handlers() {
  for (int sig : kStopSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = stop_signal_handler;
    sigemptyset(&sa.sa_mask);
    for (int other : kStopSignals) sigaddset(&sa.sa_mask, other);
    sigaction(sig, &sa, nullptr);
  }
}

// The writer's part: what shutdown_monitoring does, from the writer thread
// (the signalled thread may hold any lock). Called without core_mu held.
void close_for_stop_signal(State& s) {
  set_mode(kModeShutdown);
  drain_and_close_log(s);
  s.stop_signal_done.store(true, std::memory_order_release);
}

namespace {
void flight_signal_handler(int) { flight::FlightRecorder::request_snapshot(nullptr, true); }
}  // namespace

void install_flight_signal(const Config& config) {
  const int sig = static_cast<int>(config.flight_signal);
  if (sig == 0) return;
  struct sigaction current {};
  if (sigaction(sig, nullptr, &current) != 0) {
    std::fprintf(stderr, "sonde: flight recorder: flight_signal %d is not a signal\n", sig);
    return;
  }
  // The program's own handler stays: snapshots then come from sonde_snapshot().
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) {
    std::fprintf(stderr,
                 "sonde: flight recorder: signal %d already has a handler; set flight_signal to "
                 "another signal or call sonde_snapshot()\n",
                 sig);
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = flight_signal_handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

void install_crash_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = crash_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, &g_previous[sig]);
}

}  // namespace controller
}  // namespace sonde::monitor
