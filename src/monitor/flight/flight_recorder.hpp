// The flight recorder (config `flight = on`, docs/flight-recorder.md): the
// probes run exactly as always, but the writer thread keeps each thread's
// full buffers in memory instead of writing them, the newest
// flight_ring_kib per thread, and hands the oldest back to its thread. A
// snapshot writes the events of the last flight_window_ms of every thread,
// cut at one instant, as an ordinary native log of its own. Snapshots are
// asked for by a signal, by sonde_snapshot(), or by a trigger: a trace at
// least flight_slow_trace_ms long, or an execution far outside its calling
// context (flight_context_model, context_trigger.hpp).
//
// Everything here runs on the writer thread with core_mu held, except
// request_snapshot(), which any thread (and a signal handler) may call.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "monitor/buffer.hpp"
#include "monitor/config.hpp"
#include "monitor/flight/context_trigger.hpp"

namespace sonde::monitor::controller {
struct State;
}

namespace sonde::monitor::flight {

struct FlightStats {
  uint64_t snapshots = 0;       // written
  uint64_t failed = 0;          // could not be written (the error went to stderr)
  uint64_t suppressed = 0;      // triggers within flight_min_interval_ms of the last snapshot
  uint64_t over_limit = 0;      // requests after flight_max_snapshots
  uint64_t events_written = 0;  // in all snapshots
  uint64_t traces_cut_off = 0;  // traces in a window whose start the rings no longer held
  uint64_t calls_salvaged = 0;  // calls inside those, written as traces of their own
  std::string last_path;
};

class FlightRecorder {
 public:
  explicit FlightRecorder(const Config& config);
  // Reads flight_context_model if one is set; "" or the problem.
  std::string load_context_model();

  // Takes a full buffer instead of writing it (drain_full); hands the
  // thread's oldest held buffer back when the ring is over its size.
  void hold(controller::State& s, Buffer* b);
  // Whether buffers of `ch` are still held (its channel must stay).
  bool holds(const ThreadChannel* ch) const;
  // Lets go of the buffers of threads that exited longer than a window ago.
  void expire_exited(controller::State& s, uint64_t now_raw, double ns_per_tick);
  // Looks at the newest events of live threads' current buffers for the
  // slow-trace trigger (the rest is seen as buffers are held).
  void scan_partial(controller::State& s);

  // Writes a snapshot now if one was asked for or triggered and the limits
  // allow it. Returns true if it wrote (or tried to write) one.
  bool serve(controller::State& s);
  // A snapshot now, whatever the interval (a fatal signal: the last chance).
  void snapshot_now(controller::State& s, const std::string& reason);
  const FlightStats& stats() const { return stats_; }
  const ContextTriggerStats& context_stats() const { return context_.stats(); }
  bool context_trigger_active() const { return context_.active(); }

  // Any thread, async-signal-safe for `from_signal` (no reason text then).
  static void request_snapshot(const char* reason, bool from_signal);

 private:
  struct Held {
    std::deque<Buffer*> buffers;  // oldest first
    // The slow-trace trigger's scan of this thread's stream.
    uint32_t depth = 0;
    uint64_t trace_start = 0;
    const Buffer* scanned_buffer = nullptr;  // partly scanned current buffer
    size_t scanned = 0;                      // its events already scanned
    ContextTrigger::Stream context;          // the context trigger's view of it
  };
  // Whether any trigger looks at the events.
  bool scanning() const { return slow_ticks_ != 0 || context_.active(); }
  void scan(controller::State& s, Held& h, const RawEvent* begin, const RawEvent* end);
  void trigger(std::string reason);
  // flight_slow_trace_ms in timer ticks, once the writer's clock is known.
  void set_slow_ticks(const controller::State& s);
  void release(controller::State& s, Buffer* b);
  std::string write_snapshot(controller::State& s, const std::string& reason);

  const Config& config_;
  const uint32_t ring_buffers_;
  std::unordered_map<const ThreadChannel*, Held> held_;
  uint64_t slow_ticks_ = 0;  // flight_slow_trace_ms in timer ticks (0: off)
  ContextTrigger context_;
  bool triggered_ = false;   // a trigger fired since the last snapshot
  std::string trigger_reason_;  // the first trigger's reason since then
  int64_t last_snapshot_ms_ = -1;
  uint32_t signals_served_ = 0;
  uint32_t requests_served_ = 0;
  FlightStats stats_;
};

}  // namespace sonde::monitor::flight
