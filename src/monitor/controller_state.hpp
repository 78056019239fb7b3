// The state libsonde's parts share, and what each part offers the others
// (internal to libsonde, whose symbols are hidden):
//   controller.cpp       threads and their buffers: the probes' slow path
//   writers/writer_thread.cpp  the writer thread: drains, health, the loop
//   lifecycle.cpp        start, shutdown, flush, the exit summary
//   pattern_control.cpp  patterns set at run time
//   stop_signals.cpp     fatal and stop signals, _exit
//   fork_handling.cpp    fork: the child writes its own log or stops
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "monitor/channel.hpp"
#include "monitor/config.hpp"
#include "monitor/cull.hpp"
#include "monitor/flight/flight_recorder.hpp"
#include "monitor/patterns.hpp"
#include "monitor/probe_busy.hpp"
#include "monitor/thread_state.hpp"
#include "monitor/writers/writer_core.hpp"

namespace sonde::monitor {
// Set while this thread runs start(), and for good on the writer thread
// (lifecycle.cpp): such a thread's probes find monitoring not started.
extern __thread bool t_starting __attribute__((tls_model("initial-exec")));
}  // namespace sonde::monitor

namespace sonde::monitor::controller {

struct State {
  Config config;
  // Lock order: core_mu before channels_mu. Neither is taken on the hot path.
  std::mutex channels_mu;                // channel list
  std::vector<ThreadChannel*> channels;  // live and not yet drained
  std::vector<Buffer*> recycled;         // buffers of exited threads
  uint32_t next_thread_index = 0;
  FullStack full;
  WriterDoorbell doorbell;  // rung after pushing to `full` and on requests
  std::atomic<uint64_t> next_trace_block{0};
  uint64_t trace_base = 0;
  std::unique_ptr<WriterCore> core;
  // flight = on: holds the threads' buffers instead of writing them (the
  // core then writes to the null writer). Writer thread only, core_mu held.
  std::unique_ptr<flight::FlightRecorder> flight;
  std::mutex core_mu;  // sync mode and shutdown
  std::thread writer;
  std::atomic<bool> stop{false};
  std::atomic<bool> crash_request{false};
  std::atomic<bool> crash_done{false};
  // Flush tickets: a caller takes ticket T (flush_requested after its
  // increment) and waits until flush_done >= T. The writer notes the
  // requested count before it drains, so a flush already under way when the
  // ticket was taken does not count for it.
  std::atomic<uint64_t> flush_requested{0};
  std::atomic<uint64_t> flush_done{0};
  // Code ranges about to be unmapped (dlclose): applied by the writer after
  // the flush that resolved every address seen before the unload.
  std::mutex unload_mu;
  std::vector<std::pair<uint64_t, uint64_t>> unloaded_ranges;
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> buffers_written{0};
  std::atomic<uint64_t> lost_unreported{0};
  // Health of exited threads (live threads keep theirs in ThreadState).
  std::atomic<uint64_t> unwound_frames{0};
  std::atomic<uint64_t> unmatched_exits{0};
  std::atomic<uint64_t> signal_lost{0};
  // Block policy: a wait that timed out marks the writer stalled; until it
  // returns a buffer again no probe waits (they drop and count instead).
  std::atomic<bool> writer_stalled{false};
  std::atomic<uint32_t> burst_taken{0};      // burst buffers handed out (config.burst_buffers)
  std::atomic<uint64_t> writer_stalls{0};    // block waits that timed out
  std::atomic<uint64_t> blocked_wait_ns{0};  // time probes spent waiting for buffers
  // A stop signal (SIGTERM, SIGINT, SIGHUP) asks the writer to close the log.
  std::atomic<int> stop_signal{0};
  std::atomic<bool> stop_signal_done{false};
  std::atomic<pid_t> writer_tid{0};
  std::atomic<pid_t> writer_pid{0};  // the process the writer thread runs in
  int64_t writer_cpu_ns = 0;         // the writer thread's CPU time, taken when it stops
  std::mutex patterns_mu;
  PatternSet patterns;
  std::atomic<uint8_t> op_generation{1};
  bool closed = false;
  std::atomic<bool> restart_after_fork{false};
  std::mutex restart_mu;
};

inline State& state() {
  static State* s = new State;  // never destroyed: probes may run during exit
  return *s;
}

constexpr uint64_t kTraceBlock = 4096;  // trace ids a thread takes at a time
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};

// controller.cpp
extern pthread_key_t g_thread_key;  // its destructor is thread_exit
void thread_exit(void* arg);
void hand_off(ThreadState& t, bool final);
void set_no_buffer(ThreadState& t);

// writers/writer_thread.cpp
extern uint32_t g_still_running_cause;
void writer_loop();
void final_drain(State& s, bool closing);
FunctionNames names_in_log(State& s);
FunctionNames names_already_in_log(State& s);
struct Health {
  uint64_t unwound_frames = 0;
  uint64_t unmatched_exits = 0;
  uint64_t signal_lost = 0;
};
Health current_health(State& s);

// lifecycle.cpp
void print_summary(State& s);
// Writes what is left, closes the log once, prints the summary (the
// writer stopped or, for a stop signal, the writer itself).
void drain_and_close_log(State& s);

// stop_signals.cpp
void install_crash_handlers();
void install_stop_handlers();
// flight = on: flight_signal asks for a snapshot (if the program has no handler for it).
void install_flight_signal(const Config& config);
void close_for_stop_signal(State& s);

// fork_handling.cpp
void on_fork_prepare();
void on_fork_parent();
void on_fork_child();

}  // namespace sonde::monitor::controller
